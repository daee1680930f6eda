/* SpanRecord instances built natively along with the scan (see _scan.c for the API). */
#include "_scan.h"
#include <structmember.h>

/* SpanRecord's fields, in the order records are filled below. */
enum {
    R_TRACE_ID, R_SPAN_ID, R_PARENT, R_NAME, R_START, R_END, R_KIND, R_STATUS_CODE,
    R_STATUS_MESSAGE, R_ATTRIBUTES, R_EVENTS, R_RESOURCE, R_SCOPE, R_FIELDS
};
static const char *record_fields[R_FIELDS] = {
    "trace_id", "span_id", "parent_span_id", "name", "start_ns", "end_ns", "kind",
    "status_code", "status_message", "attributes", "events", "resource", "scope",
};
/* Set once by bind(): the class, where each field's slot lives, the StatusCode members
 * (UNSET, OK, ERROR) and the function turning raw Span.Event bytes into a SpanEvent. */
static PyTypeObject *record_type = NULL;
static Py_ssize_t record_offsets[R_FIELDS];
static PyObject *record_statuses = NULL;
static PyObject *record_event = NULL;

PyObject *tracescore_bind(PyObject *self, PyObject *args) {
    PyObject *type, *fields, *statuses, *event;
    if (!PyArg_ParseTuple(args, "O!O!O!O", &PyType_Type, &type, &PyTuple_Type, &fields,
                          &PyTuple_Type, &statuses, &event))
        return NULL;
    /* Every field must be a plain object slot, and there must be no other field: a record
     * built here never runs __init__, so a field this file does not know would stay unset. */
    if (PyTuple_GET_SIZE(fields) != R_FIELDS || PyTuple_GET_SIZE(statuses) != 3)
        return PyErr_Format(PyExc_TypeError, "bind: expected %d fields and 3 statuses",
                            R_FIELDS);
    for (int n = 0; n < R_FIELDS; n++) {
        PyObject *name = PyUnicode_FromString(record_fields[n]);
        if (name == NULL) return NULL;
        int listed = PySequence_Contains(fields, name);
        PyObject *descr = listed == 1 ? PyObject_GetAttr(type, name) : NULL;
        Py_DECREF(name);
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)descr)->d_member->type != T_OBJECT_EX) {
            Py_XDECREF(descr);
            PyErr_Clear();
            return PyErr_Format(PyExc_TypeError, "bind: %s is not a slot of the record class",
                                record_fields[n]);
        }
        record_offsets[n] = ((PyMemberDescrObject *)descr)->d_member->offset;
        Py_DECREF(descr);
    }
    Py_XSETREF(record_type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(record_statuses, Py_NewRef(statuses));
    Py_XSETREF(record_event, Py_NewRef(event));
    Py_RETURN_NONE;
}

static PyObject *hex_of(const uint8_t *data, Py_ssize_t len) {
    static const char digits[] = "0123456789abcdef";
    PyObject *out = PyUnicode_New(2 * len, 127);
    if (out == NULL) return NULL;
    Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t n = 0; n < len; n++) {
        o[2 * n] = digits[data[n] >> 4];
        o[2 * n + 1] = digits[data[n] & 15];
    }
    return out;
}

/* A value shared by equal keys within a call or across calls (new reference). */
static PyObject *shared(PyObject *cache, PyObject *value) {
    if (value == NULL) return NULL;
    PyObject *kept = PyDict_SetDefault(cache, value, value); /* borrowed */
    Py_XINCREF(kept);
    Py_DECREF(value);
    return kept;
}

/* Whether a span may be an agent span by the caller's rule (attribute, value, name prefix,
 * keys): its attribute equals value, or its name starts with the prefix, or it carries any of
 * the keys. 1, 0, or -1 with an exception set. No rule: every span is a candidate. */
static int is_candidate(PyObject *rule, PyObject *attrs, PyObject *name) {
    if (rule == NULL) return 1;
    PyObject *value = PyDict_GetItemWithError(attrs, PyTuple_GET_ITEM(rule, 0));
    if (value != NULL) {
        int equal = PyObject_RichCompareBool(value, PyTuple_GET_ITEM(rule, 1), Py_EQ);
        if (equal) return equal;
    } else if (PyErr_Occurred()) {
        return -1;
    }
    Py_ssize_t prefixed = PyUnicode_Tailmatch(name, PyTuple_GET_ITEM(rule, 2), 0, PY_SSIZE_T_MAX, -1);
    if (prefixed) return (int)prefixed;
    PyObject *keys = PyTuple_GET_ITEM(rule, 3);
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(keys); n++) {
        int carried = PyDict_Contains(attrs, PyTuple_GET_ITEM(keys, n));
        if (carried) return carried;
    }
    return 0;
}

/* One Span message to (i, j, k, trace_id, span_id, size, record, candidate) (new reference),
 * or NULL; candidate is is_candidate() of the record. */
PyObject *tracescore_span_record(Ctx *ctx, Shared *sh, const uint8_t *data, Py_ssize_t len,
                                 Py_ssize_t i, Py_ssize_t j, Py_ssize_t k, PyObject *resource,
                                 PyObject *scope) {
    Parsed s;
    if (tracescore_parse_span(ctx, data, len, &s)) return NULL;
    PyObject *trace = bytes_of(s.trace, s.trace_len);
    PyObject *sid = bytes_of(s.sid, s.sid_len);
    PyObject *trace_hex = NULL;
    if (trace != NULL) {
        trace_hex = PyDict_GetItemWithError(sh->trace_ids, trace);
        if (trace_hex != NULL) {
            Py_INCREF(trace_hex);
        } else if (!PyErr_Occurred() && (trace_hex = hex_of(s.trace, s.trace_len)) != NULL &&
                   PyDict_SetItem(sh->trace_ids, trace, trace_hex) < 0) {
            Py_CLEAR(trace_hex);
        }
    }
    int parent_set = 0;
    if (s.parent_len == 8)
        for (int n = 0; n < 8; n++) parent_set |= s.parent[n];
    int32_t code = (int32_t)s.code; /* an int32 field, as upb and the tuples read it */
    PyObject *status = PyTuple_GET_ITEM(record_statuses, code >= 0 && code <= 2 ? code : 0);
    PyObject *events = s.events;
    if (PyTuple_GET_SIZE(s.events)) {
        events = PyTuple_New(PyTuple_GET_SIZE(s.events));
        for (Py_ssize_t n = 0; events != NULL && n < PyTuple_GET_SIZE(s.events); n++) {
            PyObject *event = PyObject_CallOneArg(record_event, PyTuple_GET_ITEM(s.events, n));
            if (event == NULL) Py_CLEAR(events);
            else PyTuple_SET_ITEM(events, n, event);
        }
        Py_DECREF(s.events);
    }
    PyObject *values[R_FIELDS] = {
        [R_TRACE_ID] = trace_hex,
        [R_SPAN_ID] = hex_of(s.sid, s.sid_len),
        [R_PARENT] = parent_set ? hex_of(s.parent, 8) : Py_NewRef(Py_None),
        [R_NAME] = shared(sh->names, text_of(s.name, s.name_len)),
        [R_START] = PyLong_FromUnsignedLongLong(s.start),
        [R_END] = PyLong_FromUnsignedLongLong(s.stop),
        [R_KIND] = PyLong_FromLong((int32_t)s.kind),
        [R_STATUS_CODE] = Py_NewRef(status),
        [R_STATUS_MESSAGE] = text_of(s.msg, s.msg_len),
        [R_ATTRIBUTES] = s.attrs,
        [R_EVENTS] = events,
        [R_RESOURCE] = Py_NewRef(resource),
        [R_SCOPE] = Py_NewRef(scope),
    };
    PyObject *record = record_type->tp_alloc(record_type, 0);
    int ok = record != NULL;
    for (int n = 0; n < R_FIELDS; n++) ok = ok && values[n] != NULL;
    if (!ok) {
        for (int n = 0; n < R_FIELDS; n++) Py_XDECREF(values[n]);
        Py_XDECREF(record);
        Py_XDECREF(trace);
        Py_XDECREF(sid);
        return NULL;
    }
    for (int n = 0; n < R_FIELDS; n++) /* the slots take the references */
        *(PyObject **)((char *)record + record_offsets[n]) = values[n];
    int candidate = is_candidate(sh->rule, values[R_ATTRIBUTES], values[R_NAME]);
    PyObject *items[8] = {
        PyLong_FromSsize_t(i), PyLong_FromSsize_t(j), PyLong_FromSsize_t(k), trace, sid,
        PyLong_FromSsize_t(s.size), record,
        candidate < 0 ? NULL : Py_NewRef(candidate ? Py_True : Py_False),
    };
    return tuple_of(items, 8);
}

int tracescore_records_bound(void) { return record_type != NULL; }
