/* flat_run: a trace that is one flat agent run of plain GenAI spans, checked, read and made
 * into steps and its trajectory in one call (trajectory/_flat.py asks it first; see flat_run
 * below). Its spans are ordered and checked by _flat_order.c, read by _genai.c's reader, its
 * steps made the way trajectory/_steps.py makes them, slots filled directly. Tests compare it
 * with the Python flat path and the general builder.
 */
#include "_genai.h"

/* `value or None` of a span's time: an exact int (borrowed); NULL when not one. */
static PyObject *time_or_none(PyObject *value) {
    if (value == NULL || !PyLong_CheckExact(value)) return NULL;
    return PyObject_IsTrue(value) ? value : Py_None;
}

/* An instance of the slotted `type` with its `count` slots at `offsets` set to `values`
 * (stolen, also on failure; none NULL), without running __init__; NULL on error. */
static PyObject *instance_of(PyObject *type, const Py_ssize_t *offsets, PyObject **values,
                             int count) {
    PyObject *made = ((PyTypeObject *)type)->tp_alloc((PyTypeObject *)type, 0);
    if (made == NULL) {
        for (int n = 0; n < count; n++) Py_DECREF(values[n]);
        return NULL;
    }
    for (int n = 0; n < count; n++) SLOT(made, offsets[n]) = values[n];
    return made;
}

/* Whether `name` is an output tool of `names` (a tuple of exact str): `is_output_tool`, one
 * of them or one of them and "_" before the rest. -1 when a name is not an exact str. */
static int output_tool(PyObject *name, PyObject *names) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(name);
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(names); n++) {
        PyObject *other = PyTuple_GET_ITEM(names, n);
        if (!PyUnicode_CheckExact(other)) return -1;
        Py_ssize_t size = PyUnicode_GET_LENGTH(other);
        if (size > len || PyUnicode_KIND(other) != PyUnicode_KIND(name)) continue;
        if (memcmp(PyUnicode_DATA(name), PyUnicode_DATA(other), size * PyUnicode_KIND(name)))
            continue;
        if (size == len || PyUnicode_READ_CHAR(name, size) == '_') return 1;
    }
    return 0;
}

/* Field `n` of the field values `values` of a view (see `made`): NULL is its default. */
#define FIELD(values, n) \
    ((values)[n] != NULL ? (values)[n] : PyTuple_GET_ITEM(bound.view_defaults, n))

/* The step of one span's native view, given as its field `values`: a ToolCall (`executed_call`
 * with no request; NULL in *step when `shows_unrequested` leaves it out) or a ModelCall
 * (`model_call`). 0, or 1 when the span is not a plain step of the run (the caller declines),
 * -1 on error. */
static int step_of(PyObject *span, PyObject **values, PyObject *root_id, PyObject *agent,
                   PyObject *output_tools, int include_output_tools, PyObject **step) {
    PyObject *role = FIELD(values, V_ROLE);
    if (role != bound.tool_role && role != bound.model_role) return 1; /* a second agent */
    /* Under the agent span itself: no outer tool span to merge into, no nested run. */
    PyObject *parent = SLOT(span, bound.parent_span_id), *span_id = SLOT(span, bound.span_id);
    if (parent == NULL || !PyUnicode_CheckExact(parent) || !same_text(parent, root_id))
        return 1;
    PyObject *start = time_or_none(SLOT(span, bound.start_ns));
    PyObject *end = time_or_none(SLOT(span, bound.end_ns));
    if (start == NULL || end == NULL || span_id == NULL) return 1;
    if (role == bound.model_role) {
        PyObject *fields[M_FIELDS] = {
            Py_NewRef(FIELD(values, V_MODEL)),
            Py_NewRef(FIELD(values, V_INPUT_TOKENS)),
            Py_NewRef(FIELD(values, V_OUTPUT_TOKENS)),
            Py_NewRef(start),
            Py_NewRef(end),
            Py_NewRef(span_id),
        };
        *step = instance_of(bound.model_call_type, bound.model_call_offsets, fields, M_FIELDS);
        return *step == NULL ? -1 : 0;
    }
    PyObject *name = FIELD(values, V_TOOL_NAME);
    if (!include_output_tools) {
        int shown = output_tool(name, output_tools);
        if (shown < 0) return 1;
        if (shown) return 0; /* an output tool: not a step */
    }
    PyObject *missing = PyTuple_GET_ITEM(bound.view_defaults, V_ARGUMENTS);
    PyObject *arguments = FIELD(values, V_ARGUMENTS);
    PyObject *result = FIELD(values, V_RESULT);
    PyObject *call_id = FIELD(values, V_CALL_ID);
    int failed = FIELD(values, V_ERROR) == Py_True;
    PyObject *fields[C_FIELDS] = {
        Py_NewRef(name),
        Py_NewRef(call_id),
        Py_NewRef(arguments == missing ? Py_None : arguments),
        Py_NewRef(result == missing ? Py_None : result),
        Py_NewRef(failed ? bound.status_error : bound.status_ok),
        Py_NewRef(failed ? FIELD(values, V_ERROR_TYPE) : Py_None),
        Py_NewRef(failed ? FIELD(values, V_ERROR_MESSAGE) : Py_None),
        Py_NewRef(Py_None), /* pause reason */
        Py_NewRef(start),
        Py_NewRef(end),
        Py_NewRef(span_id),
        Py_NewRef(agent),
    };
    *step = instance_of(bound.tool_call_type, bound.tool_call_offsets, fields, C_FIELDS);
    return *step == NULL ? -1 : 0;
}

/* Trajectory's fields, in declaration order (bind_flat checks), and what bind_flat bound. */
enum { T_TRACE_ID, T_SPAN_ID, T_AGENT, T_INPUT, T_OUTPUT, T_TOOLS, T_STEPS, T_START, T_END,
       T_COMPLETE, T_ATTRIBUTES, T_RESOURCE, T_WARNINGS, T_FIELDS };
static const char *trajectory_fields[T_FIELDS] = {
    "trace_id", "span_id",  "agent",    "input",      "output",   "available_tools", "steps",
    "start_ns", "end_ns",   "complete", "attributes", "resource", "warnings"};
static struct {
    PyObject *type;
    Py_ssize_t offsets[T_FIELDS], trace_id, resource; /* and SpanRecord's */
} flat;

/* bind_flat(Trajectory, its field names, SpanRecord): once, after bind_genai. */
PyObject *tracescore_bind_flat(PyObject *self, PyObject *args) {
    PyObject *type, *names, *record;
    if (!PyArg_ParseTuple(args, "O!O!O!:bind_flat", &PyType_Type, &type, &PyTuple_Type, &names,
                          &PyType_Type, &record))
        return NULL;
    if (record != bound.record_type || PyTuple_GET_SIZE(names) != T_FIELDS)
        return PyErr_Format(PyExc_TypeError, "bind_flat: after bind_genai, with %d fields",
                            T_FIELDS);
    for (int n = 0; n < T_FIELDS; n++) {
        PyObject *name = PyTuple_GET_ITEM(names, n);
        if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, trajectory_fields[n]))
            return PyErr_Format(PyExc_TypeError, "bind_flat: Trajectory field %d is not %s", n,
                                trajectory_fields[n]);
        if ((flat.offsets[n] = tracescore_slot_offset(type, trajectory_fields[n])) < 0)
            return NULL;
    }
    if ((flat.trace_id = tracescore_slot_offset(record, "trace_id")) < 0 ||
        (flat.resource = tracescore_slot_offset(record, "resource")) < 0)
        return NULL;
    Py_XSETREF(flat.type, Py_NewRef(type));
    Py_RETURN_NONE;
}

/* The Trajectory `run_trajectory` makes of a flat run (new reference; steps stolen), or
 * FALLBACK when its agent view has an input, an output or tools (the native reader leaves such
 * agent spans to Python today: `_run` then picks them), NULL on error. */
static PyObject *flat_trajectory(PyObject *root, PyObject *view, PyObject *steps) {
    PyObject *values[T_FIELDS] = {0}, *made = NULL;
    values[T_STEPS] = steps;
    PyObject *input = SLOT(view, bound.view_offsets[V_INPUT]);
    PyObject *output = SLOT(view, bound.view_offsets[V_OUTPUT]);
    PyObject *tools = SLOT(view, bound.view_offsets[V_TOOLS]);
    PyObject *attributes = SLOT(root, bound.attributes);
    if (input != Py_None || output == NULL || tools == NULL || attributes == NULL) goto decline;
    int shown = PyObject_IsTrue(output);
    if (shown == 0) shown = PyObject_IsTrue(tools);
    if (shown < 0) goto done;
    if (shown) goto decline;
    values[T_ATTRIBUTES] = PyDict_CheckExact(attributes)
                               ? PyDict_Copy(attributes)
                               : PyObject_CallOneArg((PyObject *)&PyDict_Type, attributes);
    if (values[T_ATTRIBUTES] == NULL) goto done;
    values[T_TRACE_ID] = Py_XNewRef(SLOT(root, flat.trace_id));
    values[T_SPAN_ID] = Py_NewRef(SLOT(root, bound.span_id));
    values[T_AGENT] = Py_NewRef(SLOT(view, bound.view_offsets[V_AGENT_NAME]));
    values[T_INPUT] = Py_NewRef(Py_None);
    values[T_OUTPUT] = Py_NewRef(Py_None);
    values[T_TOOLS] = PyTuple_New(0);
    values[T_START] = Py_XNewRef(time_or_none(SLOT(root, bound.start_ns)));
    values[T_END] = Py_XNewRef(time_or_none(SLOT(root, bound.end_ns)));
    values[T_COMPLETE] = Py_NewRef(Py_True);
    values[T_RESOURCE] = Py_XNewRef(SLOT(root, flat.resource));
    values[T_WARNINGS] = PyTuple_New(0);
    for (int n = 0; n < T_FIELDS; n++) {
        if (values[n] != NULL) continue;
        if (PyErr_Occurred()) goto done; /* a tuple not made: the error, not a decline */
        goto decline;                    /* a slot the span never had */
    }
    return instance_of(flat.type, flat.offsets, values, T_FIELDS);
decline:
    made = DECLINE();
done:
    for (int n = 0; n < T_FIELDS; n++) Py_XDECREF(values[n]);
    return made;
}

/* flat_run(spans, max_value_chars, output_tool_names, include_output_tools)
 *   -> Trajectory | FALLBACK
 * The trajectory `_flat._flat_run` builds of `spans` (a trace's SpanRecords, in any order)
 * when they are a flat run (tracescore_forward, in (start, end, span id) order) whose every
 * span is read here: the agent span natively an agent view, every other span natively a tool
 * or model view under it, or None. Only the agent view is made: each other span's step is made of its view's
 * field values (a model view would add nothing to the trajectory: no input, output or tools),
 * and the trajectory of the agent view as `run_trajectory` makes it (flat_trajectory). FALLBACK
 * for any other trace (the caller then orders, checks and reads it in Python). */
static PyObject *flat_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_CheckExact(args[0]) || !PyTuple_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "flat_run(list, int, tuple, bool)");
        return NULL;
    }
    if (bound.fallback == NULL || flat.type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "flat_run before bind_genai() and bind_flat()");
        return NULL;
    }
    PyObject *limit = args[1];
    int include_output_tools = PyObject_IsTrue(args[3]);
    if (include_output_tools < 0) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(args[0]);
    if (count == 0) return DECLINE();
    Entry *entries = PyMem_Malloc((size_t)count * sizeof(Entry));
    if (entries == NULL) return PyErr_NoMemory();
    int plain = tracescore_in_order(args[0], entries);
    if (plain > 0) plain = tracescore_forward(entries, count);
    /* The spans read are held (a tuple, in order): the list and what it holds may change
     * while views are made (Deferred is Python's). */
    PyObject *spans = plain > 0 ? PyTuple_New(count) : NULL;
    if (spans != NULL)
        for (Py_ssize_t n = 0; n < count; n++)
            PyTuple_SET_ITEM(spans, n, Py_NewRef(entries[n].span));
    PyMem_Free(entries);
    if (plain <= 0) return plain < 0 ? NULL : DECLINE();
    if (spans == NULL) return NULL;
    PyObject *root = PyTuple_GET_ITEM(spans, 0), *steps = NULL, *out = NULL;
    PyObject *agent_view = tracescore_read_plain(root, limit, NULL);
    if (agent_view == NULL) goto done;
    if (agent_view == bound.fallback || agent_view == Py_None ||
        SLOT(agent_view, bound.view_offsets[V_ROLE]) != bound.agent_role) {
        out = DECLINE();
        goto done;
    }
    /* A native agent view has a non-empty agent name, no warnings and no requests. */
    PyObject *agent = SLOT(agent_view, bound.view_offsets[V_AGENT_NAME]);
    PyObject *root_id = SLOT(root, bound.span_id);
    if ((steps = PyList_New(0)) == NULL) goto done;
    for (Py_ssize_t n = 1; n < PyTuple_GET_SIZE(spans); n++) {
        PyObject *span = PyTuple_GET_ITEM(spans, n);
        PyObject *values[V_FIELDS] = {0};
        PyObject *read = tracescore_read_plain(span, limit, values);
        if (read == NULL) goto done;
        PyObject *step = NULL;
        int status = 0;
        if (read == bound.fallback)
            status = 1;
        else if (read == Py_True)
            status = step_of(span, values, root_id, agent, args[2], include_output_tools, &step);
        Py_DECREF(read);
        for (int v = 0; v < V_FIELDS; v++) Py_XDECREF(values[v]);
        if (status < 0) goto done;
        if (status > 0) {
            out = DECLINE();
            goto done;
        }
        if (step != NULL) {
            int appended = PyList_Append(steps, step);
            Py_DECREF(step);
            if (appended < 0) goto done;
        }
    }
    PyObject *made = PyList_AsTuple(steps);
    if (made != NULL) out = flat_trajectory(root, agent_view, made);
done:
    Py_XDECREF(steps);
    Py_XDECREF(agent_view);
    Py_DECREF(spans);
    return out;
}

PyMethodDef tracescore_flat_run_def = {
    "flat_run", (PyCFunction)(void (*)(void))flat_run, METH_FASTCALL,
    "flat_run(spans, max_value_chars, output_tool_names, include_output_tools) -> "
    "the Trajectory of a flat run, or FALLBACK (_flat.c)."};
