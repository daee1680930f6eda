/* cut_spans: a request without some spans, and those spans framed for later (see _scan.c).
 * The pure-Python twin is tracescore.assembler._wire.python_cut_spans. */
#include "_scan.h"
#include <stdlib.h>

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t n) {
    if (b->len + n > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        char *data = PyMem_Realloc(b->data, cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = data;
        b->cap = cap;
    }
    return 0;
}

static int buf_put(Buf *b, const void *p, Py_ssize_t n) {
    if (buf_reserve(b, n)) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/* tag, varint(len(payload)), payload */
static int buf_field(Buf *b, uint8_t tag, const Buf *payload) {
    uint8_t head[11];
    int n = 0;
    head[n++] = tag;
    uint64_t v = (uint64_t)payload->len;
    while (v >= 0x80) {
        head[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    head[n++] = (uint8_t)v;
    return buf_put(b, head, n) || buf_put(b, payload->data, payload->len);
}

/* A span cut out of its scope: its index there and its bytes. */
typedef struct {
    Py_ssize_t at;
    const uint8_t *data;
    Py_ssize_t len;
} Taken;

static int cmp_index(const void *a, const void *b) {
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

/* The ScopeSpans payload [p, end) without the spans in drop, into *kept; the dropped ones go
 * to held. 1: spans remain, 0: none remain, -1: error. */
static int cut_scope(const uint8_t *p, const uint8_t *end, Py_ssize_t i, Py_ssize_t j,
                     PyObject *drop, PyObject *rs_header, PyObject *held, Buf *kept) {
    if (!PyAnySet_Check(drop)) {
        PyErr_SetString(PyExc_TypeError, "cut_spans: span indices must be a set");
        return -1;
    }
    Py_ssize_t n_drop = PySet_GET_SIZE(drop);
    /* + 1: never a zero-byte allocation, whose NULL would read as out of memory */
    Py_ssize_t *drops = PyMem_Malloc(sizeof(Py_ssize_t) * (n_drop + 1));
    Taken *taken = PyMem_Malloc(sizeof(Taken) * (n_drop + 1));
    Buf header = {0};
    int rc = -1, kept_spans = 0;
    Py_ssize_t n_taken = 0, next = 0, k = -1, at = 0;
    Py_hash_t hash;
    PyObject *item;
    if (drops == NULL || taken == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t n = 0; _PySet_NextEntry(drop, &at, &item, &hash); n++) {
        drops[n] = PyLong_AsSsize_t(item);
        if (drops[n] == -1 && PyErr_Occurred()) goto done;
    }
    qsort(drops, n_drop, sizeof(Py_ssize_t), cmp_index);
    Field f;
    while (p < end) {
        const uint8_t *start = p;
        if (read_field(&p, end, &f, "scope_spans")) goto done;
        if (f.number == 2 && f.wire == 2) {
            k++;
            if (next < n_drop && drops[next] == k) {
                next++;
                taken[n_taken++] = (Taken){k, f.data, f.len};
                continue;
            }
            kept_spans = 1;
        } else if (buf_put(&header, start, p - start)) {
            goto done;
        }
        if (buf_put(kept, start, p - start)) goto done;
    }
    PyObject *ss_header = PyBytes_FromStringAndSize(header.data ? header.data : "", header.len);
    if (ss_header == NULL) goto done;
    rc = kept_spans;
    for (Py_ssize_t n = 0; n < n_taken && rc >= 0; n++) {
        PyObject *key = Py_BuildValue("(nnn)", i, j, taken[n].at);
        PyObject *value = Py_BuildValue("(OOy#)", rs_header, ss_header,
                                        (const char *)taken[n].data, taken[n].len);
        if (key == NULL || value == NULL || PyDict_SetItem(held, key, value) < 0) rc = -1;
        Py_XDECREF(key);
        Py_XDECREF(value);
    }
    Py_DECREF(ss_header);
done:
    PyMem_Free(drops);
    PyMem_Free(taken);
    PyMem_Free(header.data);
    return rc;
}

/* The ResourceSpans payload [p, end) with cuts in its scopes, into *kept.
 * 1: something remains, 0: every scope lost its spans, -1: error. */
static int cut_resource(const uint8_t *p, const uint8_t *end, Py_ssize_t i, PyObject *by_scope,
                        PyObject *held, Buf *kept, Buf *scope) {
    Buf header = {0};
    PyObject *rs_header = NULL;
    int rc = -1, had_scopes = 0, kept_scopes = 0;
    Field f;
    for (const uint8_t *q = p; q < end;) { /* the header first: held spans need it */
        const uint8_t *start = q;
        if (read_field(&q, end, &f, "resource_spans")) goto done;
        if (!(f.number == 2 && f.wire == 2) && buf_put(&header, start, q - start)) goto done;
    }
    rs_header = PyBytes_FromStringAndSize(header.data ? header.data : "", header.len);
    if (rs_header == NULL) goto done;
    Py_ssize_t j = -1;
    while (p < end) {
        const uint8_t *start = p;
        next_field(&p, end, &f); /* checked above */
        if (!(f.number == 2 && f.wire == 2)) {
            if (buf_put(kept, start, p - start)) goto done;
            continue;
        }
        j++;
        had_scopes = 1;
        PyObject *index = PyLong_FromSsize_t(j);
        if (index == NULL) goto done;
        PyObject *drop = PyDict_GetItemWithError(by_scope, index); /* borrowed */
        Py_DECREF(index);
        int truthy = drop == NULL ? 0 : PyObject_IsTrue(drop);
        if (PyErr_Occurred() || truthy < 0) goto done;
        if (!truthy) {
            if (buf_put(kept, start, p - start)) goto done;
            kept_scopes = 1;
            continue;
        }
        scope->len = 0;
        int left = cut_scope(f.data, f.data + f.len, i, j, drop, rs_header, held, scope);
        if (left < 0) goto done;
        if (left) {
            if (buf_field(kept, 0x12, scope)) goto done;
            kept_scopes = 1;
        }
    }
    rc = had_scopes && !kept_scopes ? 0 : 1;
done:
    Py_XDECREF(rs_header);
    PyMem_Free(header.data);
    return rc;
}

PyObject *tracescore_cut_spans(PyObject *self, PyObject *args) {
    Py_buffer body;
    PyObject *remove, *held = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*O!", &body, &PyDict_Type, &remove)) return NULL;
    /* Sized once for the whole request: growing them by doubling cost more than the cut. */
    Buf kept = {0}, resource = {0}, scope = {0};
    const uint8_t *p = body.buf, *end = p + body.len;
    Py_ssize_t i = -1;
    Field f;
    if ((held = PyDict_New()) == NULL) goto done;
    if (buf_reserve(&kept, body.len) || buf_reserve(&resource, body.len) ||
        buf_reserve(&scope, body.len))
        goto done;
    while (p < end) {
        const uint8_t *start = p;
        if (read_field(&p, end, &f, "request")) goto done;
        PyObject *by_scope = NULL;
        if (f.number == 1 && f.wire == 2) {
            i++;
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL) goto done;
            by_scope = PyDict_GetItemWithError(remove, index); /* borrowed */
            Py_DECREF(index);
            if (by_scope == NULL && PyErr_Occurred()) goto done;
            if (by_scope != NULL && !PyDict_Check(by_scope)) {
                PyErr_SetString(PyExc_TypeError, "cut_spans: remove[rs] must be a dict");
                goto done;
            }
        }
        if (by_scope == NULL || PyDict_GET_SIZE(by_scope) == 0) {
            if (buf_put(&kept, start, p - start)) goto done;
            continue;
        }
        resource.len = 0;
        int left = cut_resource(f.data, f.data + f.len, i, by_scope, held, &resource, &scope);
        if (left < 0 || (left && buf_field(&kept, 0x0a, &resource))) goto done;
    }
    out = Py_BuildValue("(y#O)", kept.data ? kept.data : "", kept.len, held);
done:
    Py_XDECREF(held);
    PyMem_Free(kept.data);
    PyMem_Free(resource.data);
    PyMem_Free(scope.data);
    PyBuffer_Release(&body);
    return out;
}

