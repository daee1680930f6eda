/* scan_grouped's table (see _scan.c for the API): the valid spans of a request grouped by
 * trace as they are scanned, their SpanRecords built by _records.c, the others rejected. */
#include "_scan.h"

/* One trace of a request; see scan_grouped in _scan.c for what the caller reads of it. */
typedef struct {
    uint8_t id[16];       /* the trace id, compared without a pointer to follow */
    PyObject *key;        /* the trace id bytes */
    PyObject *hex;        /* its hex str, shared by the group's records */
    PyObject *records;    /* list of SpanRecord, in wire order */
    PyObject *candidates; /* list of (i, j, k, SpanRecord) of the agent candidates */
    Py_ssize_t size, lead, last_root, lead_candidates, first, first_attr;
} Group;

/* One slot of the index: a group's position + 1 (0: a free slot) and its trace id's hash,
 * compared before the id itself. */
typedef struct {
    uint64_t hash;
    Py_ssize_t at;
} IndexSlot;

/* Groups by quick_mix of their trace id (RECENT_BITS of it), position + 1 or 0: looked at
 * before the id is hashed for the index. Spans of a few hundred traces interleave in a
 * request, and a SipHash per span was a tenth of the grouping. */
#define RECENT_BITS 9

struct Grouping {
    Group *groups; /* in order of first appearance */
    Py_ssize_t n, cap;
    /* Trace id -> position in groups + 1 (0: a free slot), open addressing over the raw 16
     * bytes: spans of the traces of a request come interleaved, and a dict keyed by bytes cost
     * a bytes object, its SipHash and a generic lookup per span (about 4% of the scan). */
    IndexSlot *index;
    Py_ssize_t index_size; /* a power of two, at least twice n */
    Py_ssize_t recent[1 << RECENT_BITS];
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

/* The index slot of a trace id (hashed `hash`): where its group's position is, or the free
 * slot to put it. */
static IndexSlot *index_slot(Grouping *g, const uint8_t *trace, uint64_t hash) {
    for (uint64_t i = hash;; i++) {
        IndexSlot *slot = &g->index[i & (g->index_size - 1)];
        if (slot->at == 0 ||
            (slot->hash == hash && memcmp(g->groups[slot->at - 1].id, trace, 16) == 0))
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
    IndexSlot *index = PyMem_Calloc(size, sizeof *index);
    if (index == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    IndexSlot *old = g->index;
    Py_ssize_t old_size = g->index_size;
    g->index = index;
    g->index_size = size;
    for (Py_ssize_t n = 0; n < old_size; n++) /* the hashes move with their slots */
        if (old[n].at) *index_slot(g, g->groups[old[n].at - 1].id, old[n].hash) = old[n];
    PyMem_Free(old);
    return 0;
}

/* The group of a valid trace id, made at its first span (at: that span's wire position). */
static Group *group_of(Grouping *g, const uint8_t *trace, Py_ssize_t at) {
    if (g->last >= 0 && memcmp(g->groups[g->last].id, trace, 16) == 0)
        return &g->groups[g->last];
    Py_ssize_t *recent = &g->recent[quick_mix(trace, 16) >> (64 - RECENT_BITS)];
    if (*recent && memcmp(g->groups[*recent - 1].id, trace, 16) == 0) {
        g->last = *recent - 1;
        return &g->groups[g->last];
    }
    uint64_t hash = bytes_hash(trace, 16);
    if (g->index_size) {
        Py_ssize_t known = index_slot(g, trace, hash)->at;
        if (known) {
            *recent = known;
            g->last = known - 1;
            return &g->groups[g->last];
        }
    }
    if (grow(g)) return NULL;
    PyObject *key = bytes_of(trace, 16);
    if (key == NULL) return NULL;
    Group *p = &g->groups[g->n++]; /* counted now: grouping_free releases what is set */
    *p = (Group){.key = key, .hex = tracescore_hex_of(trace, 16), .records = PyList_New(0),
                 .candidates = PyList_New(0), .last_root = -1, .first = at, .first_attr = -1};
    memcpy(p->id, trace, 16);
    if (p->hex == NULL || p->records == NULL || p->candidates == NULL) return NULL;
    /* Out of the cyclic GC's view, like the records they hold (_records.c): nothing in them
     * can lead back to them. A request of 512k one-span traces made 1M tracked lists, and
     * the collections they set off took three quarters of its scan. */
    PyObject_GC_UnTrack(p->records);
    PyObject_GC_UnTrack(p->candidates);
    *index_slot(g, trace, hash) = (IndexSlot){.hash = hash, .at = g->n};
    *recent = g->n;
    g->last = g->n - 1;
    return p;
}

/* A span with an invalid id: (i, j, k, trace_id, span_id, name) onto the rejects. Its record
 * is built (and dropped) as for any span, so both paths fail on the same input. */
static int reject(Shared *sh, Grouping *g, Parsed *s, Py_ssize_t i, Py_ssize_t j, Py_ssize_t k,
                  PyObject *resource, PyObject *scope) {
    PyObject *record = tracescore_record_of(sh, s, tracescore_hex_of(s->trace, s->trace_len),
                                            resource, scope);
    if (record == NULL) return -1;
    PyObject *items[6] = {ITEM(PyLong_FromSsize_t(i)), ITEM(PyLong_FromSsize_t(j)),
                          ITEM(PyLong_FromSsize_t(k)), ITEM(bytes_of(s->trace, s->trace_len)),
                          ITEM(bytes_of(s->sid, s->sid_len)),
                          ITEM(Py_NewRef(field_of(record, R_NAME)))};
    Py_DECREF(record);
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
    PyObject *record = tracescore_record_of(sh, &s, Py_NewRef(p->hex), resource, scope);
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
    int candidate =
        tracescore_is_scanned_candidate(sh->rule, &s, attrs, field_of(record, R_NAME));
    int rc = candidate < 0 ? -1 : PyList_Append(p->records, record);
    if (rc == 0 && candidate) {
        PyObject *items[4] = {ITEM(PyLong_FromSsize_t(i)), ITEM(PyLong_FromSsize_t(j)),
                              ITEM(PyLong_FromSsize_t(k)), ITEM(Py_NewRef(record))};
        PyObject *item = tuple_of(items, 4);
        if (item != NULL) PyObject_GC_UnTrack(item); /* an index and an untracked record */
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
            ITEM(Py_NewRef(p->records)),          ITEM(PyLong_FromSsize_t(p->size)),
            ITEM(PyLong_FromSsize_t(p->lead)),    ITEM(PyLong_FromSsize_t(p->last_root)),
            ITEM(Py_NewRef(p->candidates)),       ITEM(PyLong_FromSsize_t(p->lead_candidates)),
            ITEM(PyLong_FromSsize_t(p->first)),   ITEM(PyLong_FromSsize_t(p->first_attr)),
        };
        PyObject *group = tuple_of(items, 8);
        if (group != NULL) PyObject_GC_UnTrack(group); /* as the lists it holds */
        if (group == NULL || PyDict_SetItem(groups, p->key, group) < 0) Py_CLEAR(groups);
        Py_XDECREF(group);
        if ((n + 1) % SPANS_PER_GIL_RELEASE == 0) {
            Py_BEGIN_ALLOW_THREADS
            Py_END_ALLOW_THREADS
        }
    }
    PyObject *items[2] = {groups, groups == NULL ? NULL : Py_NewRef(g->rejects)};
    return tuple_of(items, 2);
}
