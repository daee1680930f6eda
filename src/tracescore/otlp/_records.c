/* SpanRecord instances built natively along with the scan, as tuples per span (here) or grouped
 * by trace (_grouping.c; see _scan.c for the API). */
#include "_scan.h"
#include <structmember.h>

/* SpanRecord's field names, in the order of the R_* fields (_scan.h). */
static const char *record_fields[R_FIELDS] = {
    "trace_id", "span_id", "parent_span_id", "name", "start_ns", "end_ns", "kind",
    "status_code", "status_message", "attributes", "events", "resource", "scope",
};
/* Set once by bind(): the class, where each field's slot lives, the StatusCode members
 * (UNSET, OK, ERROR) and the function turning raw Span.Event bytes into a SpanEvent. */
static PyTypeObject *record_type = NULL;
Py_ssize_t tracescore_record_offsets[R_FIELDS];
static PyObject *record_statuses = NULL;
static PyObject *record_event = NULL;

PyObject *tracescore_bind(PyObject *self, PyObject *args) {
    PyObject *type, *fields, *statuses, *event;
    Py_ssize_t offsets[R_FIELDS];
    if (!PyArg_ParseTuple(args, "O!O!O!O", &PyType_Type, &type, &PyTuple_Type, &fields,
                          &PyTuple_Type, &statuses, &event))
        return NULL;
    /* Every field must be a plain object slot, and there must be no other field: a record
     * built here never runs __init__, so a field this file does not know would stay unset. */
    if (PyTuple_GET_SIZE(fields) != R_FIELDS || PyTuple_GET_SIZE(statuses) != 3)
        return PyErr_Format(PyExc_TypeError, "bind: expected %d fields and 3 statuses",
                            R_FIELDS);
    PyTypeObject *cls = (PyTypeObject *)type;
    if (cls->tp_itemsize != 0 || !PyCallable_Check(event))
        return PyErr_Format(PyExc_TypeError, "bind: a slotted class and an event function");
    unsigned taken = 0; /* the slot words seen, one bit each */
    for (int n = 0; n < R_FIELDS; n++) {
        PyObject *name = PyUnicode_FromString(record_fields[n]);
        if (name == NULL) return NULL;
        int listed = PySequence_Contains(fields, name);
        PyObject *descr = listed == 1 ? PyObject_GetAttr(type, name) : NULL;
        Py_DECREF(name);
        /* The slot must be one of this class's own layout: a member descriptor of the class
         * or a base, whose offset lies inside the instances this class allocates. */
        PyMemberDef *member = descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type)
                                  ? ((PyMemberDescrObject *)descr)->d_member
                                  : NULL;
        /* ...and the fields' slots are distinct words after the object's header, which with
         * the size checked above means they are the whole instance past its header. */
        Py_ssize_t word = member == NULL ? -1
                          : (member->offset - (Py_ssize_t)sizeof(PyObject)) /
                                (Py_ssize_t)sizeof(PyObject *);
        if (member == NULL || member->type != T_OBJECT_EX ||
            member->offset < (Py_ssize_t)sizeof(PyObject) ||
            member->offset % (Py_ssize_t)sizeof(PyObject *) != 0 || word >= R_FIELDS ||
            (taken & (1u << word)) ||
            (size_t)member->offset + sizeof(PyObject *) > (size_t)cls->tp_basicsize ||
            !PyType_IsSubtype(cls, PyDescr_TYPE(descr))) {
            Py_XDECREF(descr);
            PyErr_Clear();
            return PyErr_Format(PyExc_TypeError, "bind: %s is not a slot of the record class",
                                record_fields[n]);
        }
        offsets[n] = member->offset;
        taken |= 1u << word;
        Py_DECREF(descr);
    }
    /* Records are allocated by PyObject_GC_New (record_of), which leaves the memory as it
     * finds it: the instance must be its header and the fields' slots, nothing else (no
     * __dict__, __weakref__ or other slot), every byte of it then written by record_of. */
    if (!PyType_IS_GC(cls) ||
        cls->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + R_FIELDS * sizeof(PyObject *)) ||
        cls->tp_dictoffset != 0 || cls->tp_weaklistoffset != 0)
        return PyErr_Format(PyExc_TypeError, "bind: the record class holds more than its %d "
                            "fields' slots", R_FIELDS);
    /* All or nothing: a bind refused halfway leaves the binding before it in place. */
    memcpy(tracescore_record_offsets, offsets, sizeof offsets);
    Py_XSETREF(record_type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(record_statuses, Py_NewRef(statuses));
    Py_XSETREF(record_event, Py_NewRef(event));
    Py_RETURN_NONE;
}

/* The two hex digits of each byte value, filled once at import (tracescore_hex_init): two
 * digits per byte from one table took half the instructions of a digit at a time. */
static char hex_pairs[512];

void tracescore_hex_init(void) {
    static const char digits[] = "0123456789abcdef";
    for (int n = 0; n < 256; n++) {
        hex_pairs[2 * n] = digits[n >> 4];
        hex_pairs[2 * n + 1] = digits[n & 15];
    }
}

PyObject *tracescore_hex_of(const uint8_t *data, Py_ssize_t len) {
    PyObject *out = PyUnicode_New(2 * len, 127);
    if (out == NULL) return NULL;
    Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t n = 0; n < len; n++) memcpy(o + 2 * n, hex_pairs + 2 * data[n], 2);
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

/* Whether a str starts with the rule's name prefix: 1, 0, or -1 with an exception set. */
static int prefixed_by(PyObject *rule, PyObject *name) {
    return (int)PyUnicode_Tailmatch(name, PyTuple_GET_ITEM(rule, 2), 0, PY_SSIZE_T_MAX, -1);
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
    int prefixed = prefixed_by(rule, name);
    if (prefixed) return prefixed;
    PyObject *keys = PyTuple_GET_ITEM(rule, 3);
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(keys); n++) {
        int carried = PyDict_Contains(attrs, PyTuple_GET_ITEM(keys, n));
        if (carried) return carried;
    }
    return 0;
}

/* Whether two attribute values are equal: exact str compared as str (no rich comparison to
 * dispatch), anything else as == does. 1, 0, or -1 with an exception set. */
static int same_value(PyObject *a, PyObject *b) {
    if (PyUnicode_CheckExact(a) && PyUnicode_CheckExact(b))
        return PyUnicode_GET_LENGTH(a) == PyUnicode_GET_LENGTH(b) && PyUnicode_Compare(a, b) == 0;
    return PyObject_RichCompareBool(a, b, Py_EQ);
}

/* is_candidate() of a parsed span from what the scan noted (s->rule_*, s->prefixed) instead
 * of asking its attributes dict: four dict lookups per span were most of the test's cost. */
int tracescore_is_scanned_candidate(PyObject *rule, const Parsed *s, PyObject *attrs,
                                    PyObject *name) {
    if (rule == NULL) return 1;
    if (s->rule_unsure) return is_candidate(rule, attrs, name);
    if (s->rule_value != NULL) {
        int equal = same_value(s->rule_value, PyTuple_GET_ITEM(rule, 1));
        if (equal) return equal;
    }
    int prefixed = s->prefixed >= 0 ? s->prefixed : prefixed_by(rule, name);
    if (prefixed) return prefixed;
    return s->rule_key;
}

/* The shared str of a span name (new reference), or NULL; *prefixed: whether it starts with
 * the rule's name prefix, as the name table remembers it (-1: not known). */
static PyObject *name_of(Shared *sh, const uint8_t *data, Py_ssize_t len, int *prefixed) {
    TextSlot **recent = &sh->name_recent[recent_index(data, len)];
    uint64_t hash = 0;
    TextSlot *slot = recent_text_slot(recent, sh->name_table, NAME_TABLE_SIZE, data, len, &hash);
    if (slot->text == NULL) {
        /* A long name is a str of its own, counted in its record's size (LONG_TEXT): shared,
         * the cache would keep what a client sends across requests. */
        PyObject *name = len > NAME_SHARE_MAX ? text_of(data, len)
                                              : shared(sh->names, text_of(data, len));
        *prefixed = -1;
        if (name != NULL && sh->names_used < NAME_TABLE_FILL) {
            int known = sh->rule == NULL ? -1 : prefixed_by(sh->rule, name);
            /* A failed test is asked again by the candidate test, which reports it. */
            if (known < 0 && sh->rule != NULL) PyErr_Clear();
            *slot = (TextSlot){.data = data, .len = len, .hash = hash,
                               .text = Py_NewRef(name), .prefixed = known};
            sh->names_used++;
            *recent = slot;
        }
        return name;
    }
    *prefixed = slot->prefixed;
    return Py_NewRef(slot->text);
}

/* The hex str of a parent span id of 8 bytes (new reference), or NULL. */
static PyObject *parent_hex_of(Shared *sh, const uint8_t *parent) {
    if (sh->parent_hex == NULL || memcmp(sh->parent, parent, 8) != 0) {
        PyObject *hex = tracescore_hex_of(parent, 8);
        if (hex == NULL) return NULL;
        Py_XSETREF(sh->parent_hex, hex);
        memcpy(sh->parent, parent, 8);
    }
    return Py_NewRef(sh->parent_hex);
}

void tracescore_shared_clear(Shared *sh) {
    text_table_clear(sh->name_table, NAME_TABLE_SIZE);
    memset(sh->name_recent, 0, sizeof sh->name_recent);
    sh->names_used = 0;
    Py_CLEAR(sh->parent_hex);
}

/* The hex trace id of a parsed span, one str per trace id and call (new reference). */
static PyObject *trace_hex_of(Shared *sh, PyObject *trace, const Parsed *s) {
    PyObject *hex = PyDict_GetItemWithError(sh->trace_ids, trace);
    if (hex != NULL) return Py_NewRef(hex);
    if (PyErr_Occurred() || (hex = tracescore_hex_of(s->trace, s->trace_len)) == NULL)
        return NULL;
    if (PyDict_SetItem(sh->trace_ids, trace, hex) < 0) Py_CLEAR(hex);
    return hex;
}

/* The SpanRecord of a parsed span (new reference), or NULL. Takes s's attributes and events
 * and the trace_hex reference, also on failure. */
PyObject *tracescore_record_of(Shared *sh, Parsed *s, PyObject *trace_hex, PyObject *resource,
                               PyObject *scope) {
    int parent_set = valid_id(s->parent, s->parent_len, 8); /* else no parent: a root */
    int32_t code = (int32_t)s->code; /* an int32 field, as upb and the tuples read it */
    PyObject *events = s->events;
    if (trace_hex != NULL && PyTuple_GET_SIZE(s->events)) {
        PyObject *event_fn = Py_NewRef(record_event); /* a callback may bind() anew */
        events = PyTuple_New(PyTuple_GET_SIZE(s->events));
        for (Py_ssize_t n = 0; events != NULL && n < PyTuple_GET_SIZE(s->events); n++) {
            PyObject *event = PyObject_CallOneArg(event_fn, PyTuple_GET_ITEM(s->events, n));
            if (event == NULL) Py_CLEAR(events);
            else PyTuple_SET_ITEM(events, n, event);
        }
        Py_DECREF(event_fn);
        Py_DECREF(s->events);
    }
    /* Read after the callbacks above, which may have bound other statuses. */
    PyObject *status = PyTuple_GET_ITEM(record_statuses, code >= 0 && code <= 2 ? code : 0);
    /* Made in order, and none after the first failure: no C API call with an exception set. */
    PyObject *values[R_FIELDS] = {[R_TRACE_ID] = trace_hex, [R_EVENTS] = events,
                                  [R_ATTRIBUTES] = s->attrs};
    int ok = trace_hex != NULL && events != NULL;
    ok = ok && (values[R_SPAN_ID] = tracescore_hex_of(s->sid, s->sid_len)) != NULL;
    ok = ok && (values[R_PARENT] = parent_set ? parent_hex_of(sh, s->parent)
                                              : Py_NewRef(Py_None)) != NULL;
    ok = ok && (values[R_NAME] = name_of(sh, s->name, s->name_len, &s->prefixed)) != NULL;
    ok = ok && (values[R_START] = PyLong_FromUnsignedLongLong(s->start)) != NULL;
    ok = ok && (values[R_END] = PyLong_FromUnsignedLongLong(s->stop)) != NULL;
    ok = ok && (values[R_KIND] = PyLong_FromLong((int32_t)s->kind)) != NULL;
    if (ok) values[R_STATUS_CODE] = Py_NewRef(status);
    ok = ok && (values[R_STATUS_MESSAGE] = text_of(s->msg, s->msg_len)) != NULL;
    if (ok) {
        values[R_RESOURCE] = Py_NewRef(resource);
        values[R_SCOPE] = Py_NewRef(scope);
    }
    s->attrs = s->events = NULL;
    /* Not zeroed, and never tracked by the cyclic GC: every slot is written below (bind checked
     * they are all the instance holds), and nothing in a record can lead back to it (its
     * fields are fresh decoded values and shared str/dicts of atomic values), so it can never
     * be part of a cycle and reference counting frees it. Held records are most of what
     * `serve` keeps alive for decision_wait: tracked, every young, middle and full collection
     * walked them again (about 15% of scoring live, in-process replay with serve's GC
     * settings). tp_alloc zeroed, tracked and then untracked each one: ~80 instructions a
     * span more. */
    PyObject *record = ok ? PyObject_GC_New(PyObject, record_type) : NULL;
    if (record == NULL) {
        for (int n = 0; n < R_FIELDS; n++) Py_XDECREF(values[n]);
        return NULL;
    }
    for (int n = 0; n < R_FIELDS; n++) /* the slots take the references */
        SLOT(record, tracescore_record_offsets[n]) = values[n];
    return record;
}

/* One Span message to (i, j, k, trace_id, span_id, size, record, candidate) (new reference),
 * or NULL; candidate is is_candidate() of the record. */
PyObject *tracescore_span_record(Ctx *ctx, Shared *sh, const uint8_t *data, Py_ssize_t len,
                                 Py_ssize_t i, Py_ssize_t j, Py_ssize_t k, PyObject *resource,
                                 PyObject *scope) {
    Parsed s;
    if (tracescore_parse_span(ctx, data, len, &s)) return NULL;
    PyObject *trace = bytes_of(s.trace, s.trace_len);
    PyObject *trace_hex = trace == NULL ? NULL : trace_hex_of(sh, trace, &s);
    PyObject *record = tracescore_record_of(sh, &s, trace_hex, resource, scope);
    int candidate = record == NULL ? -1
                    : tracescore_is_scanned_candidate(sh->rule, &s,
                                                      field_of(record, R_ATTRIBUTES),
                                                      field_of(record, R_NAME));
    if (candidate < 0) { /* the exception stands: nothing more is asked of the C API */
        Py_XDECREF(trace);
        Py_XDECREF(record);
        return NULL;
    }
    PyObject *items[8] = {
        ITEM(PyLong_FromSsize_t(i)),      ITEM(PyLong_FromSsize_t(j)),
        ITEM(PyLong_FromSsize_t(k)),      trace,
        ITEM(bytes_of(s.sid, s.sid_len)), ITEM(PyLong_FromSsize_t(s.size)),
        record,                           ITEM(Py_NewRef(candidate ? Py_True : Py_False)),
    };
    return tuple_of(items, 8);
}

int tracescore_records_bound(void) { return record_type != NULL; }
