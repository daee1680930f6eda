/* flat_run: a trace that is one flat agent run of plain GenAI spans, checked, read and made
 * into steps in one call (trajectory/_flat.py asks it first; see flat_run below). Its spans
 * are read by _genai.c's reader, its steps are made the way trajectory/_steps.py makes them,
 * slots filled directly. Tests compare it with the Python flat path and the general builder.
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

/* `_flat._forward_tree`'s checks of `ordered` (SpanRecords in order): distinct non-empty str
 * ids, known kinds, the first span a root, every other span's parent an earlier span. 1 when
 * they hold, 0 when not (or when a value is not of the plain type: the caller checks again in
 * Python), -1 on error. */
static int forward(PyObject *ordered) {
    PyObject *seen = PySet_New(NULL);
    if (seen == NULL) return -1;
    int answer = 1;
    for (Py_ssize_t n = 0; answer == 1 && n < PyList_GET_SIZE(ordered); n++) {
        PyObject *span = PyList_GET_ITEM(ordered, n);
        if ((PyObject *)Py_TYPE(span) != bound.record_type) {
            answer = 0;
            break;
        }
        PyObject *sid = SLOT(span, bound.span_id), *parent = SLOT(span, bound.parent_span_id);
        PyObject *kind = SLOT(span, bound.kind);
        if (sid == NULL || !PyUnicode_CheckExact(sid) || PyUnicode_GET_LENGTH(sid) == 0 ||
            kind == NULL || !PyLong_CheckExact(kind) || parent == NULL) {
            answer = 0;
            break;
        }
        int overflow;
        long value = PyLong_AsLongAndOverflow(kind, &overflow);
        if (overflow || value < 0 || value > bound.max_kind) {
            answer = 0;
            break;
        }
        if (n == 0) {
            /* A root: its parent is falsy (None, or no text). */
            if (parent != Py_None &&
                !(PyUnicode_CheckExact(parent) && PyUnicode_GET_LENGTH(parent) == 0))
                answer = 0;
        } else if (!PyUnicode_CheckExact(parent)) {
            answer = 0;
        } else {
            answer = PySet_Contains(seen, parent);
        }
        if (answer == 1) {
            int again = PySet_Contains(seen, sid);
            answer = again < 0 ? -1 : !again;
        }
        if (answer == 1 && PySet_Add(seen, sid) < 0) answer = -1;
    }
    Py_DECREF(seen);
    return answer;
}

/* flat_run(ordered, max_value_chars, output_tool_names, include_output_tools)
 *   -> (agent view, tuple of steps) | FALLBACK
 * What `_flat._flat_run` builds of `ordered` (a trace's SpanRecords in order) when it is a
 * flat run (`forward`) whose every span is read here: the agent span natively an agent view,
 * every other span natively a tool or model view under it, or None. Only the agent view is
 * made: each other span's step is made of its view's field values (a model view would add
 * nothing to the trajectory: no input, output or tools). FALLBACK for any other trace (the
 * caller then checks and reads it in Python). */
static PyObject *flat_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_CheckExact(args[0]) || !PyTuple_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "flat_run(list, int, tuple, bool)");
        return NULL;
    }
    if (bound.fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "flat_run before bind_genai()");
        return NULL;
    }
    PyObject *ordered = args[0], *limit = args[1];
    int include_output_tools = PyObject_IsTrue(args[3]);
    if (include_output_tools < 0) return NULL;
    if (PyList_GET_SIZE(ordered) == 0) return DECLINE();
    int plain = forward(ordered);
    if (plain <= 0) return plain < 0 ? NULL : DECLINE();
    /* The span list and what it holds may change while views are made (Deferred is Python's):
     * hold the spans read. */
    PyObject *spans = PyList_AsTuple(ordered);
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
    if (made != NULL) {
        PyObject *pair[2] = {Py_NewRef(agent_view), made};
        out = tuple_of(pair, 2);
    }
done:
    Py_XDECREF(steps);
    Py_XDECREF(agent_view);
    Py_DECREF(spans);
    return out;
}

PyMethodDef tracescore_flat_run_def = {
    "flat_run", (PyCFunction)(void (*)(void))flat_run, METH_FASTCALL,
    "flat_run(ordered, max_value_chars, output_tool_names, include_output_tools) -> "
    "(agent view, steps), or FALLBACK (_genai.c)."};
