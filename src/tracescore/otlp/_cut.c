/* cut_spans: a request without some spans, and those spans framed for later (see _scan.c).
 * The pure-Python twin is tracescore.assembler._wire.python_cut_spans.
 *
 * Two walks: the first sizes every scope and resource that loses spans (their new lengths
 * prefix them), the second writes the request once, straight into its bytes object. Writing
 * each level into a buffer of its own and framing it into the next copied every forwarded
 * byte four times, most of the cut's cost. */
#include "_scan.h"
#include <stdlib.h>

/* Where a walk writes: into `out` (room for `cap` bytes) when set; with out == NULL it only
 * counts (sizing). A write past `cap` is not made but noted (`overflow`): the caller then
 * fails with SystemError instead of writing past what it allocated. */
typedef struct {
    char *out;
    Py_ssize_t len, cap;
    int overflow;
} Out;

static void put(Out *o, const void *p, Py_ssize_t n) {
    if (o->out != NULL && n > 0) {
        if (n > o->cap - o->len) {
            o->overflow = 1;
            return;
        }
        memcpy(o->out + o->len, p, (size_t)n);
    }
    o->len += n;
}

/* The bytes of a length-delimited field with a one-byte tag and a `len`-byte payload. */
static Py_ssize_t field_size(Py_ssize_t len) {
    Py_ssize_t n = 1 + 1; /* the tag, and the length's last byte */
    for (uint64_t v = (uint64_t)len; v >= 0x80; v >>= 7) n++;
    return n + len;
}

/* A length-delimited field's tag and length. */
static void put_head(Out *o, uint8_t tag, Py_ssize_t size) {
    uint8_t head[11];
    int n = 0;
    head[n++] = tag;
    uint64_t v = (uint64_t)size;
    for (; v >= 0x80; v >>= 7) head[n++] = (uint8_t)(v | 0x80);
    head[n++] = (uint8_t)v;
    put(o, head, n);
}

/* A scope or resource that loses spans: what the sizing walk found, in walk order. */
typedef struct {
    Py_ssize_t index;  /* the resource's or the scope's index in the request or resource */
    int resource;      /* whether it is a resource's Part (else a scope's) */
    Py_ssize_t len;    /* its payload's new length */
    int left;          /* whether it stays (a scope: spans remain; a resource: scopes do) */
    Py_ssize_t *drops; /* a scope's span indices to take out, ascending (owned) */
    Py_ssize_t n_drop;
} Part;

typedef struct {
    Part *parts;
    Py_ssize_t count, cap, next; /* next: the part the writing walk is at */
} Plan;

static Part *plan_add(Plan *plan) {
    if (plan->count == plan->cap) {
        Py_ssize_t cap = plan->cap ? 2 * plan->cap : 8;
        Part *parts = PyMem_Realloc(plan->parts, (size_t)cap * sizeof(Part));
        if (parts == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        plan->parts = parts;
        plan->cap = cap;
    }
    Part *part = &plan->parts[plan->count++];
    *part = (Part){0};
    return part;
}

static void plan_free(Plan *plan) {
    for (Py_ssize_t n = 0; n < plan->count; n++) PyMem_Free(plan->parts[n].drops);
    PyMem_Free(plan->parts);
}

static int cmp_index(const void *a, const void *b) {
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

/* The fields of the message [p, end) but those numbered `skip`, as bytes (new reference). */
static PyObject *fields_except(const uint8_t *p, const uint8_t *end, uint32_t skip) {
    Out o = {NULL, 0, 0, 0};
    for (int write = 0; write < 2; write++) {
        PyObject *bytes = NULL;
        if (write) {
            bytes = PyBytes_FromStringAndSize(NULL, o.len);
            if (bytes == NULL) return NULL;
            o = (Out){PyBytes_AS_STRING(bytes), 0, o.len, 0};
        }
        Field f;
        for (const uint8_t *q = p; q < end;) {
            const uint8_t *start = q;
            if (read_field(&q, end, &f, "cut")) { /* checked by the sizing walk */
                Py_XDECREF(bytes);
                return NULL;
            }
            if (!(f.number == skip && f.wire == 2)) put(&o, start, q - start);
        }
        if (write) {
            if (o.overflow || o.len != o.cap) {
                Py_DECREF(bytes);
                PyErr_SetString(PyExc_SystemError, "cut_spans: sized and written lengths differ");
                return NULL;
            }
            return bytes;
        }
    }
    return NULL; /* not reached */
}

/* Size a ScopeSpans payload [p, end) without the spans `drop` (a set) names, into `part`. */
static int size_scope(const uint8_t *p, const uint8_t *end, PyObject *drop, Part *part) {
    /* Exactly a set: no Python code (a subclass's __len__ or __iter__) runs while it is read. */
    if (!PyAnySet_CheckExact(drop)) {
        PyErr_SetString(PyExc_TypeError, "cut_spans: span indices must be a set");
        return -1;
    }
    Py_ssize_t n_drop = PySet_GET_SIZE(drop), at = 0, n = 0;
    /* + 1: never a zero-byte allocation, whose NULL would read as out of memory */
    part->drops = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n_drop + 1));
    if (part->drops == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_hash_t hash;
    PyObject *item;
    while (_PySet_NextEntry(drop, &at, &item, &hash)) {
        part->drops[n] = PyLong_AsSsize_t(item);
        if (part->drops[n] == -1 && PyErr_Occurred()) return -1;
        n++;
    }
    part->n_drop = n;
    qsort(part->drops, (size_t)n, sizeof(Py_ssize_t), cmp_index);
    Py_ssize_t k = -1, next = 0, len = end - p;
    Field f;
    while (p < end) {
        const uint8_t *start = p;
        if (read_field(&p, end, &f, "scope_spans")) return -1;
        if (!(f.number == 2 && f.wire == 2)) continue;
        k++;
        while (next < n && part->drops[next] < k) next++; /* indices past the spans: none */
        if (next < n && part->drops[next] == k)
            len -= p - start;
        else
            part->left = 1;
    }
    part->len = len;
    return 0;
}

/* Write a ScopeSpans payload [p, end) without its `part`'s spans; the spans taken out go to
 * `held` as {(i, j, k): (rs_header, ss_header, span bytes)}. */
static int write_scope(const uint8_t *p, const uint8_t *end, const Part *part, Out *o,
                       PyObject *held, Py_ssize_t i, Py_ssize_t j, PyObject *rs_header) {
    PyObject *ss_header = fields_except(p, end, 2);
    if (ss_header == NULL) return -1;
    Py_ssize_t k = -1, next = 0;
    int rc = 0;
    Field f;
    while (rc == 0 && p < end) {
        const uint8_t *start = p;
        if (read_field(&p, end, &f, "scope_spans")) { /* checked by the sizing walk */
            rc = -1;
            break;
        }
        if (f.number == 2 && f.wire == 2) {
            k++;
            while (next < part->n_drop && part->drops[next] < k) next++;
            if (next < part->n_drop && part->drops[next] == k) {
                PyObject *key = Py_BuildValue("(nnn)", i, j, k);
                PyObject *value = Py_BuildValue("(OOy#)", rs_header, ss_header,
                                                (const char *)f.data, f.len);
                if (key == NULL || value == NULL || PyDict_SetItem(held, key, value) < 0) rc = -1;
                Py_XDECREF(key);
                Py_XDECREF(value);
                continue;
            }
        }
        put(o, start, p - start);
    }
    Py_XDECREF(ss_header);
    return rc;
}

/* The next Part of the plan for the writing walk when it is the one for `index`, else NULL:
 * the writing walk follows the plan made by the sizing walk and asks the caller's dicts
 * nothing, so nothing they do between the walks can change what is written. */
static const Part *next_part(Plan *plan, Py_ssize_t index, int resource) {
    if (plan->next >= plan->count || plan->parts[plan->next].index != index ||
        plan->parts[plan->next].resource != resource)
        return NULL;
    return &plan->parts[plan->next++];
}

/* The ResourceSpans payload [p, end) with cuts in its scopes: sized (o == NULL: the plan
 * gets the resource's Part, then its scopes') or written into `o` (their Parts consumed in the
 * same order, the resource's by the caller). 0, or -1 on error. */
static int walk_resource(const uint8_t *p, const uint8_t *end, Py_ssize_t i, PyObject *by_scope,
                         Plan *plan, Out *o, PyObject *held) {
    int sizing = o == NULL;
    Py_ssize_t len = end - p, j = -1, at = plan->count;
    if (sizing) {
        Part *resource = plan_add(plan); /* filled in below */
        if (resource == NULL) return -1;
        resource->index = i;
        resource->resource = 1;
    }
    int had_scopes = 0, kept_scopes = 0;
    PyObject *rs_header = NULL;
    if (!sizing && (rs_header = fields_except(p, end, 2)) == NULL) return -1;
    int rc = -1;
    Field f;
    while (p < end) {
        const uint8_t *start = p;
        if (read_field(&p, end, &f, "resource_spans")) goto done;
        if (!(f.number == 2 && f.wire == 2)) {
            if (!sizing) put(o, start, p - start);
            continue;
        }
        j++;
        had_scopes = 1;
        if (!sizing) {
            const Part *scope = next_part(plan, j, 0);
            if (scope == NULL) { /* no cut in this scope */
                put(o, start, p - start);
                continue;
            }
            Out dropped = {NULL, 0, 0, 0};
            Out *into = scope->left ? o : &dropped; /* a scope left empty is not written */
            if (scope->left) put_head(o, 0x12, scope->len);
            if (write_scope(f.data, f.data + f.len, scope, into, held, i, j, rs_header))
                goto done;
            continue;
        }
        PyObject *index = PyLong_FromSsize_t(j);
        if (index == NULL) goto done;
        PyObject *drop = PyDict_GetItemWithError(by_scope, index); /* borrowed */
        Py_DECREF(index);
        if (drop == NULL && PyErr_Occurred()) goto done;
        if (drop != NULL && !PyAnySet_CheckExact(drop)) {
            PyErr_SetString(PyExc_TypeError, "cut_spans: span indices must be a set");
            goto done;
        }
        if (drop == NULL || PySet_GET_SIZE(drop) == 0) {
            kept_scopes = 1;
            continue;
        }
        Part *scope = plan_add(plan);
        if (scope == NULL) goto done;
        scope->index = j;
        if (size_scope(f.data, f.data + f.len, drop, scope)) goto done;
        len -= p - start;
        if (scope->left) {
            len += field_size(scope->len);
            kept_scopes = 1;
        }
    }
    if (sizing) {
        plan->parts[at].len = len;
        plan->parts[at].left = !(had_scopes && !kept_scopes);
    }
    rc = 0;
done:
    Py_XDECREF(rs_header);
    return rc;
}

/* The request's ResourceSpans by index that lose spans: remove[i], or NULL (borrowed). */
static int changes_of(PyObject *remove, Py_ssize_t i, PyObject **by_scope) {
    PyObject *index = PyLong_FromSsize_t(i);
    if (index == NULL) return -1;
    *by_scope = PyDict_GetItemWithError(remove, index); /* borrowed */
    Py_DECREF(index);
    if (*by_scope == NULL && PyErr_Occurred()) return -1;
    if (*by_scope != NULL && !PyDict_CheckExact(*by_scope)) {
        PyErr_SetString(PyExc_TypeError, "cut_spans: remove[rs] must be a dict");
        return -1;
    }
    if (*by_scope != NULL && PyDict_GET_SIZE(*by_scope) == 0) *by_scope = NULL;
    return 0;
}

PyObject *tracescore_cut_spans(PyObject *self, PyObject *args) {
    PyObject *raw, *remove, *held = NULL, *kept = NULL, *out = NULL;
    /* Only bytes (their contents cannot change between the walks) and exact dicts. */
    if (!PyArg_ParseTuple(args, "O!O!", &PyBytes_Type, &raw, &PyDict_Type, &remove)) return NULL;
    Plan plan = {0};
    const uint8_t *body = (const uint8_t *)PyBytes_AS_STRING(raw);
    const uint8_t *start, *p, *end = body + PyBytes_GET_SIZE(raw);
    Py_ssize_t i = -1, total = PyBytes_GET_SIZE(raw);
    Field f;
    /* Sizing: each resource that loses spans, and its scopes, planned. */
    for (p = body; p < end;) {
        start = p;
        if (read_field(&p, end, &f, "request")) goto done;
        PyObject *by_scope = NULL;
        if (f.number == 1 && f.wire == 2 && (++i, changes_of(remove, i, &by_scope))) goto done;
        if (by_scope == NULL) continue;
        Py_ssize_t at = plan.count;
        if (walk_resource(f.data, f.data + f.len, i, by_scope, &plan, NULL, NULL)) goto done;
        const Part *resource = &plan.parts[at];
        total -= p - start;
        if (resource->left) total += field_size(resource->len);
    }
    /* Writing, straight into the bytes object, as planned. */
    if ((held = PyDict_New()) == NULL) goto done;
    if ((kept = PyBytes_FromStringAndSize(NULL, total)) == NULL) goto done;
    Out o = {PyBytes_AS_STRING(kept), 0, total, 0};
    i = -1;
    for (p = body; p < end;) {
        start = p;
        if (read_field(&p, end, &f, "request")) goto done; /* checked by the sizing walk */
        const Part *resource = NULL;
        if (f.number == 1 && f.wire == 2) {
            ++i;
            resource = next_part(&plan, i, 1);
        }
        if (resource == NULL) {
            put(&o, start, p - start);
            continue;
        }
        Out dropped = {NULL, 0, 0, 0};
        Out *into = resource->left ? &o : &dropped;
        if (resource->left) put_head(&o, 0x0a, resource->len);
        if (walk_resource(f.data, f.data + f.len, i, NULL, &plan, into, held)) goto done;
    }
    if (o.overflow || o.len != total || plan.next != plan.count) {
        PyErr_SetString(PyExc_SystemError, "cut_spans: sized and written lengths differ");
        goto done;
    }
    out = Py_BuildValue("(OO)", kept, held);
done:
    Py_XDECREF(held);
    Py_XDECREF(kept);
    plan_free(&plan);
    return out;
}
