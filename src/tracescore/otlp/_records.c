/* SpanRecord instances built natively along with the scan, as tuples per span or grouped by
 * trace (see _scan.c for the API). */
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
static int is_scanned_candidate(PyObject *rule, const Parsed *s, PyObject *attrs, PyObject *name) {
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
    uint64_t hash = bytes_hash(data, len);
    TextSlot *slot = text_slot(sh->name_table, NAME_TABLE_SIZE, data, len, hash);
    if (slot->text != NULL) {
        *prefixed = slot->prefixed;
        return Py_NewRef(slot->text);
    }
    PyObject *name = shared(sh->names, text_of(data, len));
    *prefixed = -1;
    if (name != NULL && sh->names_used < NAME_TABLE_FILL) {
        int known = sh->rule == NULL ? -1 : prefixed_by(sh->rule, name);
        if (known < 0) PyErr_Clear(); /* asked again by the candidate test, which reports it */
        *slot = (TextSlot){.data = data, .len = len, .hash = hash, .text = Py_NewRef(name),
                           .prefixed = known};
        sh->names_used++;
    }
    return name;
}

/* The hex str of a parent span id of 8 bytes (new reference), or NULL. */
static PyObject *parent_hex_of(Shared *sh, const uint8_t *parent) {
    if (sh->parent_hex == NULL || memcmp(sh->parent, parent, 8) != 0) {
        PyObject *hex = hex_of(parent, 8);
        if (hex == NULL) return NULL;
        Py_XSETREF(sh->parent_hex, hex);
        memcpy(sh->parent, parent, 8);
    }
    return Py_NewRef(sh->parent_hex);
}

void tracescore_shared_clear(Shared *sh) {
    text_table_clear(sh->name_table, NAME_TABLE_SIZE);
    sh->names_used = 0;
    Py_CLEAR(sh->parent_hex);
}

/* The hex trace id of a parsed span, one str per trace id and call (new reference). */
static PyObject *trace_hex_of(Shared *sh, PyObject *trace, const Parsed *s) {
    PyObject *hex = PyDict_GetItemWithError(sh->trace_ids, trace);
    if (hex != NULL) return Py_NewRef(hex);
    if (PyErr_Occurred() || (hex = hex_of(s->trace, s->trace_len)) == NULL) return NULL;
    if (PyDict_SetItem(sh->trace_ids, trace, hex) < 0) Py_CLEAR(hex);
    return hex;
}

/* The SpanRecord of a parsed span (new reference), or NULL. Takes s's attributes and events
 * and the trace_hex reference, also on failure. */
static PyObject *record_of(Shared *sh, Parsed *s, PyObject *trace_hex, PyObject *resource,
                           PyObject *scope) {
    int parent_set = 0;
    if (s->parent_len == 8)
        for (int n = 0; n < 8; n++) parent_set |= s->parent[n];
    int32_t code = (int32_t)s->code; /* an int32 field, as upb and the tuples read it */
    PyObject *status = PyTuple_GET_ITEM(record_statuses, code >= 0 && code <= 2 ? code : 0);
    PyObject *events = s->events;
    if (PyTuple_GET_SIZE(s->events)) {
        events = PyTuple_New(PyTuple_GET_SIZE(s->events));
        for (Py_ssize_t n = 0; events != NULL && n < PyTuple_GET_SIZE(s->events); n++) {
            PyObject *event = PyObject_CallOneArg(record_event, PyTuple_GET_ITEM(s->events, n));
            if (event == NULL) Py_CLEAR(events);
            else PyTuple_SET_ITEM(events, n, event);
        }
        Py_DECREF(s->events);
    }
    PyObject *values[R_FIELDS] = {
        [R_TRACE_ID] = trace_hex,
        [R_SPAN_ID] = hex_of(s->sid, s->sid_len),
        [R_PARENT] = parent_set ? parent_hex_of(sh, s->parent) : Py_NewRef(Py_None),
        [R_NAME] = name_of(sh, s->name, s->name_len, &s->prefixed),
        [R_START] = PyLong_FromUnsignedLongLong(s->start),
        [R_END] = PyLong_FromUnsignedLongLong(s->stop),
        [R_KIND] = PyLong_FromLong((int32_t)s->kind),
        [R_STATUS_CODE] = Py_NewRef(status),
        [R_STATUS_MESSAGE] = text_of(s->msg, s->msg_len),
        [R_ATTRIBUTES] = s->attrs,
        [R_EVENTS] = events,
        [R_RESOURCE] = Py_NewRef(resource),
        [R_SCOPE] = Py_NewRef(scope),
    };
    s->attrs = s->events = NULL;
    PyObject *record = record_type->tp_alloc(record_type, 0);
    int ok = record != NULL;
    for (int n = 0; n < R_FIELDS; n++) ok = ok && values[n] != NULL;
    if (!ok) {
        for (int n = 0; n < R_FIELDS; n++) Py_XDECREF(values[n]);
        Py_XDECREF(record);
        return NULL;
    }
    for (int n = 0; n < R_FIELDS; n++) /* the slots take the references */
        *(PyObject **)((char *)record + record_offsets[n]) = values[n];
    /* Out of the cyclic GC's view: nothing in a record can lead back to it (its fields are
     * fresh decoded values and shared str/dicts of atomic values), so it can never be part of
     * a cycle, and reference counting frees it. Held records are most of what `serve` keeps
     * alive for decision_wait: tracked, every young, middle and full collection walked them
     * again (about 15% of scoring live, in-process replay with serve's GC settings). */
    PyObject_GC_UnTrack(record);
    return record;
}

/* The fields of a record, as record_of filled them (borrowed). */
static inline PyObject *field_of(PyObject *record, int n) {
    return *(PyObject **)((char *)record + record_offsets[n]);
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
    PyObject *record = record_of(sh, &s, trace_hex, resource, scope);
    int candidate = record == NULL ? -1
                    : is_scanned_candidate(sh->rule, &s, field_of(record, R_ATTRIBUTES),
                                           field_of(record, R_NAME));
    PyObject *items[8] = {
        PyLong_FromSsize_t(i), PyLong_FromSsize_t(j), PyLong_FromSsize_t(k), trace,
        bytes_of(s.sid, s.sid_len), PyLong_FromSsize_t(s.size), record,
        candidate < 0 ? NULL : Py_NewRef(candidate ? Py_True : Py_False),
    };
    return tuple_of(items, 8);
}

int tracescore_records_bound(void) { return record_type != NULL; }

/* -- scan_grouped: the valid spans of a request grouped by trace, the others rejected ------ */

/* One trace of a request; see scan_grouped in _scan.c for what the caller reads of it. */
typedef struct {
    PyObject *key;        /* the trace id bytes */
    PyObject *hex;        /* its hex str, shared by the group's records */
    PyObject *records;    /* list of SpanRecord, in wire order */
    PyObject *candidates; /* list of (i, j, k, SpanRecord) of the agent candidates */
    Py_ssize_t size, lead, last_root, lead_candidates, first, first_attr;
} Group;

struct Grouping {
    Group *groups; /* in order of first appearance */
    Py_ssize_t n, cap;
    /* Trace id -> position in groups + 1 (0: a free slot), open addressing over the raw 16
     * bytes: spans of the traces of a request come interleaved, and a dict keyed by bytes cost
     * a bytes object, its SipHash and a generic lookup per span (about 4% of the scan). */
    Py_ssize_t *index;
    Py_ssize_t index_size; /* a power of two, at least twice n */
    PyObject *rejects;     /* list of (i, j, k, trace_id, span_id, name) */
    Py_ssize_t last;   /* the group of the previous valid span (spans of a trace come
                          together, so most spans need no index lookup), or -1 */
    Py_ssize_t spans;  /* spans seen so far: the wire position of the next one */
};

Grouping *tracescore_grouping_new(void) {
    Grouping *g = PyMem_Calloc(1, sizeof *g);
    if (g == NULL) return (Grouping *)PyErr_NoMemory();
    g->last = -1;
    g->rejects = PyList_New(0);
    if (g->rejects == NULL) {
        tracescore_grouping_free(g);
        return NULL;
    }
    return g;
}

void tracescore_grouping_free(Grouping *g) {
    for (Py_ssize_t n = 0; n < g->n; n++) {
        Group *p = &g->groups[n];
        Py_XDECREF(p->key);
        Py_XDECREF(p->hex);
        Py_XDECREF(p->records);
        Py_XDECREF(p->candidates);
    }
    PyMem_Free(g->groups);
    PyMem_Free(g->index);
    Py_XDECREF(g->rejects);
    PyMem_Free(g);
}

/* 16 (trace) or 8 (span) bytes, not all zero: what OTLP requires of ids. */
static int valid_id(const uint8_t *data, Py_ssize_t len, Py_ssize_t want) {
    uint8_t any = 0;
    if (len != want) return 0;
    for (Py_ssize_t n = 0; n < len; n++) any |= data[n];
    return any != 0;
}

/* The index slot of a trace id: where its group's position is, or the free slot to put it. */
static Py_ssize_t *index_slot(Grouping *g, const uint8_t *trace) {
    for (uint64_t i = bytes_hash(trace, 16);; i++) {
        Py_ssize_t *slot = &g->index[i & (g->index_size - 1)];
        if (*slot == 0 || memcmp(PyBytes_AS_STRING(g->groups[*slot - 1].key), trace, 16) == 0)
            return slot;
    }
}

/* Room for one more group: the groups array and an index at most half full. 0, or -1. */
static int grow(Grouping *g) {
    if (g->n == g->cap) {
        Py_ssize_t cap = g->cap ? 2 * g->cap : 16;
        Group *grown = PyMem_Realloc(g->groups, cap * sizeof *grown);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        g->groups = grown;
        g->cap = cap;
    }
    if (2 * (g->n + 1) <= g->index_size) return 0;
    Py_ssize_t size = g->index_size ? 2 * g->index_size : 64;
    Py_ssize_t *index = PyMem_Calloc(size, sizeof *index);
    if (index == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(g->index);
    g->index = index;
    g->index_size = size;
    for (Py_ssize_t n = 0; n < g->n; n++)
        *index_slot(g, (const uint8_t *)PyBytes_AS_STRING(g->groups[n].key)) = n + 1;
    return 0;
}

/* The group of a valid trace id, made at its first span (at: that span's wire position). */
static Group *group_of(Grouping *g, const uint8_t *trace, Py_ssize_t at) {
    if (g->last >= 0 && memcmp(PyBytes_AS_STRING(g->groups[g->last].key), trace, 16) == 0)
        return &g->groups[g->last];
    if (g->index_size) {
        Py_ssize_t known = *index_slot(g, trace);
        if (known) {
            g->last = known - 1;
            return &g->groups[g->last];
        }
    }
    if (grow(g)) return NULL;
    PyObject *key = bytes_of(trace, 16);
    if (key == NULL) return NULL;
    Group *p = &g->groups[g->n++]; /* counted now: grouping_free releases what is set */
    *p = (Group){.key = key, .hex = hex_of(trace, 16), .records = PyList_New(0),
                 .candidates = PyList_New(0), .last_root = -1, .first = at, .first_attr = -1};
    if (p->hex == NULL || p->records == NULL || p->candidates == NULL) return NULL;
    *index_slot(g, trace) = g->n;
    g->last = g->n - 1;
    return p;
}

/* A span with an invalid id: (i, j, k, trace_id, span_id, name) onto the rejects. Its record
 * is built (and dropped) as for any span, so both paths fail on the same input. */
static int reject(Shared *sh, Grouping *g, Parsed *s, Py_ssize_t i, Py_ssize_t j, Py_ssize_t k,
                  PyObject *resource, PyObject *scope) {
    PyObject *items[6] = {PyLong_FromSsize_t(i), PyLong_FromSsize_t(j), PyLong_FromSsize_t(k),
                          bytes_of(s->trace, s->trace_len), bytes_of(s->sid, s->sid_len), NULL};
    PyObject *record = record_of(sh, s, hex_of(s->trace, s->trace_len), resource, scope);
    if (record != NULL) items[5] = Py_NewRef(field_of(record, R_NAME));
    Py_XDECREF(record);
    PyObject *item = tuple_of(items, 6);
    int rc = item == NULL ? -1 : PyList_Append(g->rejects, item);
    Py_XDECREF(item);
    return rc;
}

/* Scan one Span message into its trace's group (or the rejects). 0, or -1 on error. */
int tracescore_group_span(Ctx *ctx, Shared *sh, Grouping *g, const uint8_t *data, Py_ssize_t len,
                          Py_ssize_t i, Py_ssize_t j, Py_ssize_t k, PyObject *resource,
                          PyObject *scope) {
    Parsed s;
    if (tracescore_parse_span(ctx, data, len, &s)) return -1;
    Py_ssize_t at = g->spans++;
    if (!valid_id(s.trace, s.trace_len, 16) || !valid_id(s.sid, s.sid_len, 8))
        return reject(sh, g, &s, i, j, k, resource, scope);
    Group *p = group_of(g, s.trace, at);
    if (p == NULL) {
        Py_CLEAR(s.attrs);
        Py_CLEAR(s.events);
        return -1;
    }
    Py_ssize_t size = s.size; /* record_of takes s's objects, not its numbers */
    PyObject *record = record_of(sh, &s, Py_NewRef(p->hex), resource, scope);
    if (record == NULL) return -1;
    PyObject *attrs = field_of(record, R_ATTRIBUTES);
    int in_lead = p->first_attr < 0; /* no span of the trace had attributes yet */
    if (PyDict_GET_SIZE(attrs)) {
        if (in_lead) p->first_attr = at;
        in_lead = 0;
    } else if (in_lead) {
        p->lead++;
    }
    if (field_of(record, R_PARENT) == Py_None) p->last_root = PyList_GET_SIZE(p->records);
    p->size += size;
    int candidate = is_scanned_candidate(sh->rule, &s, attrs, field_of(record, R_NAME));
    int rc = candidate < 0 ? -1 : PyList_Append(p->records, record);
    if (rc == 0 && candidate) {
        PyObject *items[4] = {PyLong_FromSsize_t(i), PyLong_FromSsize_t(j),
                              PyLong_FromSsize_t(k), Py_NewRef(record)};
        PyObject *item = tuple_of(items, 4);
        rc = item == NULL ? -1 : PyList_Append(p->candidates, item);
        Py_XDECREF(item);
        p->lead_candidates += in_lead;
    }
    Py_DECREF(record);
    return rc;
}

/* ({trace_id: (records, size, lead, last_root, candidates, lead_candidates, first,
 *   first_attr)}, rejects), the groups in order of first appearance (new reference). */
PyObject *tracescore_grouping_result(Grouping *g) {
    PyObject *groups = PyDict_New();
    for (Py_ssize_t n = 0; groups != NULL && n < g->n; n++) {
        Group *p = &g->groups[n];
        PyObject *items[8] = {
            Py_NewRef(p->records), PyLong_FromSsize_t(p->size), PyLong_FromSsize_t(p->lead),
            PyLong_FromSsize_t(p->last_root), Py_NewRef(p->candidates),
            PyLong_FromSsize_t(p->lead_candidates), PyLong_FromSsize_t(p->first),
            PyLong_FromSsize_t(p->first_attr),
        };
        PyObject *group = tuple_of(items, 8);
        if (group == NULL || PyDict_SetItem(groups, p->key, group) < 0) Py_CLEAR(groups);
        Py_XDECREF(group);
    }
    PyObject *items[2] = {groups, groups == NULL ? NULL : Py_NewRef(g->rejects)};
    return tuple_of(items, 2);
}
