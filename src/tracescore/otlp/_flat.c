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

/* Runs of at most this many spans are ordered by insertion (see in_order). */
#define INSERTION_MAX 64

/* A span with its times read, for ordering. */
typedef struct {
    long long start, end;
    PyObject *span, *id; /* borrowed; `id` an exact str */
} Entry;

/* `_flat._in_order`'s key, (start, end, span id); ids are exact str, so the compare cannot
 * fail. Equal keys mean equal ids, which `forward` refuses whatever their order. */
static int entry_order(const void *left, const void *right) {
    const Entry *a = left, *b = right;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    return PyUnicode_Compare(a->id, b->id);
}

/* The spans of `spans` (a list) in (start, end, span id) order into `entries`: 1, or 0 when
 * one is not a plain SpanRecord (exact int times in int64, an exact str id): the caller then
 * leaves the run to Python, which orders what it can. */
static int in_order(PyObject *spans, Entry *entries) {
    Py_ssize_t count = PyList_GET_SIZE(spans);
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *span = PyList_GET_ITEM(spans, n);
        if ((PyObject *)Py_TYPE(span) != bound.record_type) return 0;
        PyObject *start = SLOT(span, bound.start_ns), *end = SLOT(span, bound.end_ns);
        PyObject *id = SLOT(span, bound.span_id);
        if (start == NULL || !PyLong_CheckExact(start) || end == NULL ||
            !PyLong_CheckExact(end) || id == NULL || !PyUnicode_CheckExact(id))
            return 0;
        int over_start, over_end;
        entries[n].start = PyLong_AsLongLongAndOverflow(start, &over_start);
        entries[n].end = PyLong_AsLongLongAndOverflow(end, &over_end);
        if (over_start || over_end) return 0;
        entries[n].span = span;
        entries[n].id = id;
    }
    if (count > INSERTION_MAX) {
        qsort(entries, (size_t)count, sizeof(Entry), entry_order);
        return 1;
    }
    /* A run's spans arrive nearly in order (children end, and are sent, in start order): an
     * insertion sort moves few of them and calls no comparison function; qsort cost as much
     * as reading the spans' times. */
    for (Py_ssize_t n = 1; n < count; n++) {
        Entry entry = entries[n];
        Py_ssize_t at = n;
        while (at > 0 && entry_order(&entry, &entries[at - 1]) < 0) {
            entries[at] = entries[at - 1];
            at--;
        }
        entries[at] = entry;
    }
    return 1;
}

/* Span ids seen, by text: open addressing, at most half full. A set of 20 ids cost more than
 * reading the spans' attributes; so did str's own hash (SipHash, computed for each new id and
 * kept in it, though nothing else hashes a tool or model span's id). */
typedef struct {
    Py_ssize_t mask;
    PyObject **slots; /* borrowed exact str, NULL when free */
} Ids;

/* A hash of an exact str's text for `Ids`: equal texts have the same kind and data. */
static uint64_t id_hash(PyObject *id) {
    return bytes_hash(PyUnicode_DATA(id), PyUnicode_GET_LENGTH(id) * PyUnicode_KIND(id));
}

/* 1 when `id` (an exact str) is in `ids`, 0 if not; with `add`, entered when absent. */
static int ids_find(Ids *ids, PyObject *id, int add) {
    uint64_t hash = id_hash(id);
    for (Py_ssize_t at = (Py_ssize_t)(hash & (uint64_t)ids->mask);; at = (at + 1) & ids->mask) {
        PyObject *kept = ids->slots[at];
        if (kept == NULL) {
            if (add) ids->slots[at] = id;
            return 0;
        }
        if (same_text(kept, id)) return 1;
    }
}

/* `_flat._forward_tree`'s checks of `entries` (in order): distinct non-empty ids, known
 * kinds, the first span a root, every other span's parent an earlier span. 1 when they hold,
 * 0 when not (or when a value is not of the plain type: the caller checks again in Python),
 * -1 on error. */
static int forward(const Entry *entries, Py_ssize_t count) {
    Py_ssize_t size = 8;
    while (size < 2 * count) size *= 2;
    Ids seen = {size - 1, PyMem_Calloc((size_t)size, sizeof(PyObject *))};
    if (seen.slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int answer = 1;
    for (Py_ssize_t n = 0; answer == 1 && n < count; n++) {
        PyObject *span = entries[n].span, *sid = entries[n].id;
        PyObject *parent = SLOT(span, bound.parent_span_id), *kind = SLOT(span, bound.kind);
        if (PyUnicode_GET_LENGTH(sid) == 0 || kind == NULL || !PyLong_CheckExact(kind) ||
            parent == NULL) {
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
            answer = ids_find(&seen, parent, 0);
        }
        if (answer == 1) {
            int again = ids_find(&seen, sid, 1);
            answer = again < 0 ? -1 : !again;
        }
    }
    PyMem_Free(seen.slots);
    return answer;
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
    for (int n = 0; n < T_FIELDS; n++)
        if (values[n] == NULL) goto decline;
    return instance_of(flat.type, flat.offsets, values, T_FIELDS);
decline:
    made = DECLINE();
done:
    for (int n = 0; n < T_FIELDS; n++) Py_XDECREF(values[n]);
    return made;
}

/* flat_run(spans, max_value_chars, output_tool_names, include_output_tools)
 *   -> Trajectory | FALLBACK
 * The trajectory `_flat._flat_run` builds of `spans` (a trace's SpanRecords, in any order) when
 * they are a flat run (`forward`, in (start, end, span id) order) whose every span is read
 * here: the agent span natively an agent view, every other span natively a tool or model view
 * under it, or None. Only the agent view is made: each other span's step is made of its view's
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
    int plain = in_order(args[0], entries);
    if (plain > 0) plain = forward(entries, count);
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
