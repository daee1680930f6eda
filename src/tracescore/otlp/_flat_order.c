/* The order and the shape of a flat run's spans (flat_run, _flat.c): its spans ordered as
 * `_flat._in_order` orders them, and `_flat._forward_tree`'s checks of that order. */
#include "_genai.h"

/* Runs of at most this many spans are ordered by insertion (see tracescore_in_order). */
#define INSERTION_MAX 64

/* `_flat._in_order`'s key, (start, end, span id); ids are exact str, so the compare cannot
 * fail. Equal keys mean equal ids, which tracescore_forward refuses whatever their order. */
static int entry_order(const void *left, const void *right) {
    const Entry *a = left, *b = right;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    return PyUnicode_Compare(a->id, b->id);
}

/* The spans of `spans` (a list) in (start, end, span id) order into `entries`: 1, or 0 when
 * one is not a plain SpanRecord (exact int times in int64, an exact str id): the caller then
 * leaves the run to Python, which orders what it can. */
int tracescore_in_order(PyObject *spans, Entry *entries) {
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
int tracescore_forward(const Entry *entries, Py_ssize_t count) {
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
