/*
 * tracescore.otlp._scan: the spans of an OTLP ExportTraceServiceRequest, read straight off
 * the protobuf wire format, decoding only the attribute keys the caller keeps.
 *
 * Why native: in Python every attribute read costs about 1 us, through upb or by hand
 * (reference/performance.md B.1), and that alone was more than the service's whole budget
 * per span. This walks the bytes once and builds only the Python objects the trajectory
 * builder reads. `tracescore.otlp.scan` holds the pure-Python twin (used when this module
 * is not built); tests check both give the same answer on every fixture and on fuzzed input.
 *
 * scan_spans(body, keys, classify, decode_value, slow_kv, overhead) -> list of tuples
 *   (rs, ss, span indices, trace_id, span_id, parent_span_id, name, kind, start, end,
 *    status_code, status_message, attributes, attribute_bytes, events, resource, scope)
 * keys: dict, raw key bytes -> kept key str, or None when not kept; filled through
 *   classify(raw_key) on a miss (bounded by the caller's dict size check below).
 * decode_value(raw AnyValue bytes): values other than string, int, double, bool, bytes.
 * slow_kv(raw KeyValue bytes) -> (kept key or None, value): KeyValues in unusual shapes.
 * scan_records(same arguments..., names, resources, resource_fn) -> list of tuples
 *   (rs, ss, span indices, trace_id, span_id, attribute_bytes, SpanRecord): the records are
 *   allocated here and their slots filled directly (building one in Python, through the
 *   dataclass __init__, cost about as much as scanning its span). names: span name -> shared
 *   str; resources: raw resource bytes -> decoded dict, filled by resource_fn on a miss.
 * bind(SpanRecord, its field names, (UNSET, OK, ERROR), event_fn): once, before scan_records;
 *   refuses a class whose fields are not exactly the slots filled here.
 * Raises ValueError on malformed input (callers parsed the request with upb first).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#define KEY_CACHE_LIMIT 8192

typedef struct {
    uint32_t number;
    int wire;
    uint64_t value;       /* varint, fixed64 and fixed32 payloads */
    const uint8_t *data;  /* length-delimited payload */
    Py_ssize_t len;
} Field;

/* A per-call open-addressing table over the caller's key dict: looking a key up in the dict
 * needs a bytes object and its SipHash for every attribute; this needs neither. It points
 * into the dict's own key objects, which live at least as long as the call. */
#define TABLE_SIZE 512
#define TABLE_FILL 256

typedef struct {
    const char *data;
    Py_ssize_t len;
    uint64_t hash;
    PyObject *kept; /* borrowed from the dict */
} Slot;

typedef struct {
    PyObject *keys;
    PyObject *classify;
    PyObject *decode_value;
    PyObject *slow_kv;
    Py_ssize_t overhead;
    int used;
    Slot table[TABLE_SIZE];
} Ctx;

static uint64_t fnv1a(const uint8_t *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static Slot *table_find(Ctx *ctx, const uint8_t *data, Py_ssize_t len, uint64_t hash) {
    for (uint64_t i = hash;; i++) {
        Slot *slot = &ctx->table[i & (TABLE_SIZE - 1)];
        if (slot->data == NULL ||
            (slot->hash == hash && slot->len == len && memcmp(slot->data, data, len) == 0))
            return slot;
    }
}

/* Remember a key the dict holds (key: a bytes object owned by the dict). */
static void table_add(Ctx *ctx, PyObject *key, PyObject *kept) {
    if (ctx->used >= TABLE_FILL || !PyBytes_Check(key)) return;
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(key);
    Py_ssize_t len = PyBytes_GET_SIZE(key);
    uint64_t hash = fnv1a(data, len);
    Slot *slot = table_find(ctx, data, len, hash);
    if (slot->data != NULL) return;
    slot->data = (const char *)data;
    slot->len = len;
    slot->hash = hash;
    slot->kept = kept;
    ctx->used++;
}

static inline int read_varint(const uint8_t **pos, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pos;
    if (p < end && *p < 0x80) { /* most tags and lengths: one byte */
        *out = *p;
        *pos = p + 1;
        return 0;
    }
    uint64_t result = 0;
    int shift = 0;
    while (p < end) {
        uint8_t byte = *p++;
        result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *pos = p;
            *out = result;
            return 0;
        }
        shift += 7;
        if (shift > 63) return -1;
    }
    return -1;
}

static uint64_t little_endian(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* The next field at *pos; 0 on success, -1 when malformed. */
static inline int next_field(const uint8_t **pos, const uint8_t *end, Field *f) {
    uint64_t tag, n;
    if (read_varint(pos, end, &tag)) return -1;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    if (f->number == 0) return -1;
    switch (f->wire) {
    case 0:
        return read_varint(pos, end, &f->value);
    case 1:
        if (end - *pos < 8) return -1;
        f->value = little_endian(*pos, 8);
        *pos += 8;
        return 0;
    case 2:
        if (read_varint(pos, end, &n)) return -1;
        if (n > (uint64_t)(end - *pos)) return -1;
        f->data = *pos;
        f->len = (Py_ssize_t)n;
        *pos += n;
        return 0;
    case 5:
        if (end - *pos < 4) return -1;
        f->value = little_endian(*pos, 4);
        *pos += 4;
        return 0;
    default:
        return -1;
    }
}

static PyObject *malformed(const char *what) {
    PyErr_Format(PyExc_ValueError, "malformed OTLP request: %s", what);
    return NULL;
}

/* Decode one AnyValue payload; *size grows by the bytes the value holds. New reference. */
static PyObject *any_value(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Py_ssize_t *size) {
    if (len == 0) Py_RETURN_NONE;
    const uint8_t *p = data, *end = data + len;
    Field f;
    if (next_field(&p, end, &f) == 0 && p == end) {
        if (f.number == 1 && f.wire == 2) {
            PyObject *text = PyUnicode_DecodeUTF8((const char *)f.data, f.len, NULL);
            if (text != NULL) {
                *size += PyUnicode_GET_LENGTH(text);
                return text;
            }
            PyErr_Clear(); /* let upb say what is wrong with it */
        } else if (f.number == 2 && f.wire == 0) {
            return PyBool_FromLong(f.value != 0);
        } else if (f.number == 3 && f.wire == 0) {
            return PyLong_FromLongLong((long long)(int64_t)f.value);
        } else if (f.number == 4 && f.wire == 1) {
            double d;
            memcpy(&d, &f.value, sizeof d);
            return PyFloat_FromDouble(d);
        } else if (f.number == 7 && f.wire == 2) {
            *size += f.len;
            return PyBytes_FromStringAndSize((const char *)f.data, f.len);
        }
    }
    PyObject *raw = PyBytes_FromStringAndSize((const char *)data, len);
    if (raw == NULL) return NULL;
    PyObject *value = PyObject_CallOneArg(ctx->decode_value, raw);
    Py_DECREF(raw);
    if (value != NULL && value != Py_None && !PyBool_Check(value) && !PyLong_Check(value) &&
        !PyFloat_Check(value)) {
        *size += PyUnicode_Check(value) ? PyUnicode_GET_LENGTH(value)
                 : PyBytes_Check(value) ? PyBytes_GET_SIZE(value)
                                        : len;
    }
    return value;
}

/* The kept key for raw key bytes (new reference): a str, Py_None when not kept, NULL on error. */
static PyObject *kept_key(Ctx *ctx, const uint8_t *data, Py_ssize_t len) {
    Slot *slot = table_find(ctx, data, len, fnv1a(data, len));
    if (slot->data != NULL) return Py_NewRef(slot->kept);
    PyObject *raw = PyBytes_FromStringAndSize((const char *)data, len);
    if (raw == NULL) return NULL;
    PyObject *kept = PyDict_GetItemWithError(ctx->keys, raw);
    if (kept != NULL) {
        Py_INCREF(kept); /* a key past the table's fill: raw is not the dict's own object */
    } else if (!PyErr_Occurred()) {
        kept = PyObject_CallOneArg(ctx->classify, raw);
        if (kept != NULL && PyDict_GET_SIZE(ctx->keys) < KEY_CACHE_LIMIT) {
            if (PyDict_SetItem(ctx->keys, raw, kept) < 0)
                Py_CLEAR(kept);
            else
                table_add(ctx, raw, kept); /* the dict now owns raw and kept */
        }
    }
    Py_DECREF(raw);
    return kept;
}

/* Add one KeyValue to attrs when its key is kept. 0 on success, -1 on error. */
static int key_value(Ctx *ctx, const uint8_t *data, Py_ssize_t len, PyObject *attrs,
                     Py_ssize_t *size) {
    const uint8_t *p = data, *end = data + len;
    const uint8_t *key = NULL, *value = NULL;
    Py_ssize_t key_len = 0, value_len = 0;
    int values = 0, odd = 0;
    Field f;
    while (p < end) {
        if (next_field(&p, end, &f)) return malformed("attribute"), -1;
        if (f.number == 1) {
            if (f.wire != 2) odd = 1;
            key = f.data;
            key_len = f.len;
        } else if (f.number == 2) {
            if (f.wire != 2) odd = 1;
            value = f.data;
            value_len = f.len;
            values++;
        }
    }
    if (odd || values > 1 || key == NULL) {
        /* Repeated or mistyped fields have merge rules upb knows: let it decode them. */
        PyObject *raw = PyBytes_FromStringAndSize((const char *)data, len);
        if (raw == NULL) return -1;
        PyObject *pair = PyObject_CallOneArg(ctx->slow_kv, raw);
        Py_DECREF(raw);
        if (pair == NULL) return -1;
        int rc = 0;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 3) {
            PyErr_SetString(PyExc_TypeError, "slow_kv must return (key, value, size)");
            rc = -1;
        } else if (PyTuple_GET_ITEM(pair, 0) != Py_None) {
            rc = PyDict_SetItem(attrs, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
            *size += PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 2));
        }
        Py_DECREF(pair);
        return rc;
    }
    PyObject *kept = kept_key(ctx, key, key_len);
    if (kept == NULL) return -1;
    if (kept == Py_None) {
        Py_DECREF(kept);
        return 0;
    }
    PyObject *decoded = value == NULL ? Py_NewRef(Py_None) : any_value(ctx, value, value_len, size);
    int rc = decoded == NULL ? -1 : PyDict_SetItem(attrs, kept, decoded);
    Py_XDECREF(decoded);
    Py_DECREF(kept);
    return rc;
}

/* What one Span message holds, as pointers into the request (attrs and events are owned). */
typedef struct {
    const uint8_t *trace, *sid, *parent, *name, *msg;
    Py_ssize_t trace_len, sid_len, parent_len, name_len, msg_len;
    uint64_t kind, start, stop, code;
    Py_ssize_t size;
    PyObject *attrs;  /* dict of kept attributes */
    PyObject *events; /* tuple of raw Span.Event bytes */
} Parsed;

static void parsed_clear(Parsed *s) {
    Py_CLEAR(s->attrs);
    Py_CLEAR(s->events);
}

/* Read one Span message into *s; 0 on success, -1 (exception set, nothing owned) on error. */
static int parse_span(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Parsed *s) {
    const uint8_t *p = data, *end = data + len;
    PyObject *events = NULL;
    memset(s, 0, sizeof *s);
    if ((s->attrs = PyDict_New()) == NULL) return -1;
    Field f;
    while (p < end) {
        if (next_field(&p, end, &f)) {
            malformed("span");
            goto fail;
        }
        switch (f.number) {
        case 1: if (f.wire == 2) { s->trace = f.data; s->trace_len = f.len; } break;
        case 2: if (f.wire == 2) { s->sid = f.data; s->sid_len = f.len; } break;
        case 4: if (f.wire == 2) { s->parent = f.data; s->parent_len = f.len; } break;
        case 5: if (f.wire == 2) { s->name = f.data; s->name_len = f.len; } break;
        case 6: if (f.wire == 0) s->kind = f.value; break;
        case 7: if (f.wire == 1) s->start = f.value; break;
        case 8: if (f.wire == 1) s->stop = f.value; break;
        case 9:
            if (f.wire == 2 && key_value(ctx, f.data, f.len, s->attrs, &s->size)) goto fail;
            break;
        case 11:
            if (f.wire == 2) {
                if (events == NULL && (events = PyList_New(0)) == NULL) goto fail;
                PyObject *raw = PyBytes_FromStringAndSize((const char *)f.data, f.len);
                if (raw == NULL || PyList_Append(events, raw) < 0) {
                    Py_XDECREF(raw);
                    goto fail;
                }
                Py_DECREF(raw);
            }
            break;
        case 15:
            if (f.wire == 2) { /* Status: later fields override, as a message merge does */
                const uint8_t *q = f.data, *qend = f.data + f.len;
                Field g;
                while (q < qend) {
                    if (next_field(&q, qend, &g)) {
                        malformed("span status");
                        goto fail;
                    }
                    if (g.number == 2 && g.wire == 2) { s->msg = g.data; s->msg_len = g.len; }
                    else if (g.number == 3 && g.wire == 0) s->code = g.value;
                }
            }
            break;
        default:
            break;
        }
    }
    s->events = events ? PyList_AsTuple(events) : PyTuple_New(0);
    Py_CLEAR(events);
    if (s->events == NULL) goto fail;
    s->size += ctx->overhead * PyDict_GET_SIZE(s->attrs);
    return 0;
fail:
    Py_XDECREF(events);
    parsed_clear(s);
    return -1;
}

static PyObject *bytes_of(const uint8_t *data, Py_ssize_t len) {
    return PyBytes_FromStringAndSize(data ? (const char *)data : "", len);
}

static PyObject *text_of(const uint8_t *data, Py_ssize_t len) {
    return PyUnicode_DecodeUTF8(data ? (const char *)data : "", len, NULL);
}

/* A tuple of n new references (stolen, also on failure), or NULL when any is NULL. */
static PyObject *tuple_of(PyObject **items, int n) {
    PyObject *out = PyTuple_New(n);
    for (int m = 0; m < n; m++) {
        if (items[m] == NULL || out == NULL) {
            for (int q = 0; q < n; q++) Py_XDECREF(items[q]);
            Py_XDECREF(out);
            return NULL;
        }
    }
    for (int m = 0; m < n; m++) PyTuple_SET_ITEM(out, m, items[m]);
    return out;
}

/* One Span message to a result tuple (new reference), or NULL. */
static PyObject *span(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Py_ssize_t i,
                      Py_ssize_t j, Py_ssize_t k, PyObject *resource, PyObject *scope) {
    Parsed s;
    if (parse_span(ctx, data, len, &s)) return NULL;
    PyObject *items[17] = {
        PyLong_FromSsize_t(i),
        PyLong_FromSsize_t(j),
        PyLong_FromSsize_t(k),
        bytes_of(s.trace, s.trace_len),
        bytes_of(s.sid, s.sid_len),
        bytes_of(s.parent, s.parent_len),
        text_of(s.name, s.name_len),
        PyLong_FromLong((int32_t)s.kind),
        PyLong_FromUnsignedLongLong(s.start),
        PyLong_FromUnsignedLongLong(s.stop),
        PyLong_FromLong((int32_t)s.code),
        text_of(s.msg, s.msg_len),
        s.attrs, /* ownership moves to the tuple */
        PyLong_FromSsize_t(s.size),
        s.events,
        Py_NewRef(resource),
        Py_NewRef(scope),
    };
    return tuple_of(items, 17);
}

/* -- records: SpanRecord instances built here, without running their Python __init__ ------ */

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

static PyObject *bind(PyObject *self, PyObject *args) {
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

typedef struct {
    PyObject *names;     /* span name -> the one str object kept for it */
    PyObject *trace_ids; /* trace id bytes -> its hex str, for this call */
} Shared;

/* One Span message to (i, j, k, trace_id, span_id, size, record) (new reference), or NULL. */
static PyObject *span_record(Ctx *ctx, Shared *sh, const uint8_t *data, Py_ssize_t len,
                             Py_ssize_t i, Py_ssize_t j, Py_ssize_t k, PyObject *resource,
                             PyObject *scope) {
    Parsed s;
    if (parse_span(ctx, data, len, &s)) return NULL;
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
    PyObject *status = PyTuple_GET_ITEM(record_statuses, s.code <= 2 ? s.code : 0);
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
    PyObject *items[7] = {
        PyLong_FromSsize_t(i), PyLong_FromSsize_t(j), PyLong_FromSsize_t(k), trace, sid,
        PyLong_FromSsize_t(s.size), record,
    };
    return tuple_of(items, 7);
}

/* Records mode of walk(): where decoded resources and shared strings come from. */
typedef struct {
    Shared shared;
    PyObject *resources;   /* raw resource bytes -> decoded dict (the caller's cache) */
    PyObject *resource_fn; /* raw resource bytes -> decoded dict, filling that cache */
} Records;

/* Every span of body, as tuples (records == NULL) or records, appended to a new list. */
static PyObject *walk(Ctx *ctx, Py_buffer *body, Records *records) {
    ctx->used = 0;
    memset(ctx->table, 0, sizeof ctx->table);
    Py_ssize_t at = 0;
    PyObject *key, *kept;
    while (PyDict_Next(ctx->keys, &at, &key, &kept)) table_add(ctx, key, kept);
    PyObject *out = PyList_New(0);
    const uint8_t *p = body->buf, *end = p + body->len;
    Py_ssize_t i = -1;
    Field rs, g, h;
    if (out == NULL) return NULL;
    while (p < end) {
        if (next_field(&p, end, &rs)) { malformed("request"); goto fail; }
        if (rs.number != 1 || rs.wire != 2) continue;
        i++;
        /* The resource may follow its scope_spans on the wire: find it first. */
        const uint8_t *rs_end = rs.data + rs.len, *q = rs.data;
        const uint8_t *res = NULL;
        Py_ssize_t res_len = 0, j = -1;
        while (q < rs_end) {
            if (next_field(&q, rs_end, &g)) { malformed("resource_spans"); goto fail; }
            if (g.number == 1 && g.wire == 2) { res = g.data; res_len = g.len; }
        }
        PyObject *resource = bytes_of(res, res_len);
        if (resource != NULL && records != NULL) { /* the decoded dict, shared */
            PyObject *decoded = PyDict_GetItemWithError(records->resources, resource);
            if (decoded != NULL) Py_INCREF(decoded);
            else if (!PyErr_Occurred()) decoded = PyObject_CallOneArg(records->resource_fn, resource);
            Py_SETREF(resource, decoded);
        }
        if (resource == NULL) goto fail;
        for (q = rs.data; q < rs_end;) {
            next_field(&q, rs_end, &g); /* checked above */
            if (g.number != 2 || g.wire != 2) continue;
            j++;
            const uint8_t *ss_end = g.data + g.len, *r = g.data;
            const uint8_t *scope_name = NULL;
            Py_ssize_t scope_len = 0, k = -1;
            while (r < ss_end) {
                if (next_field(&r, ss_end, &h)) { Py_DECREF(resource); malformed("scope_spans"); goto fail; }
                if (h.number == 1 && h.wire == 2) {
                    const uint8_t *s = h.data, *s_end = h.data + h.len;
                    Field n;
                    /* A repeated scope merges: a later name wins, a missing one keeps it. */
                    while (s < s_end) {
                        if (next_field(&s, s_end, &n)) { Py_DECREF(resource); malformed("scope"); goto fail; }
                        if (n.number == 1 && n.wire == 2) { scope_name = n.data; scope_len = n.len; }
                    }
                }
            }
            PyObject *scope = text_of(scope_name, scope_len);
            if (scope == NULL) { Py_DECREF(resource); goto fail; }
            for (r = g.data; r < ss_end;) {
                next_field(&r, ss_end, &h); /* checked above */
                if (h.number != 2 || h.wire != 2) continue;
                k++;
                PyObject *item =
                    records == NULL
                        ? span(ctx, h.data, h.len, i, j, k, resource, scope)
                        : span_record(ctx, &records->shared, h.data, h.len, i, j, k, resource, scope);
                if (item == NULL || PyList_Append(out, item) < 0) {
                    Py_XDECREF(item);
                    Py_DECREF(scope);
                    Py_DECREF(resource);
                    goto fail;
                }
                Py_DECREF(item);
            }
            Py_DECREF(scope);
        }
        Py_DECREF(resource);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *scan_spans(PyObject *self, PyObject *args) {
    Py_buffer body;
    Ctx ctx;
    if (!PyArg_ParseTuple(args, "y*O!OOOn", &body, &PyDict_Type, &ctx.keys, &ctx.classify,
                          &ctx.decode_value, &ctx.slow_kv, &ctx.overhead))
        return NULL;
    PyObject *out = walk(&ctx, &body, NULL);
    PyBuffer_Release(&body);
    return out;
}

static PyObject *scan_records(PyObject *self, PyObject *args) {
    Py_buffer body;
    Ctx ctx;
    Records records;
    if (!PyArg_ParseTuple(args, "y*O!OOOnO!O!O", &body, &PyDict_Type, &ctx.keys, &ctx.classify,
                          &ctx.decode_value, &ctx.slow_kv, &ctx.overhead, &PyDict_Type,
                          &records.shared.names, &PyDict_Type, &records.resources,
                          &records.resource_fn))
        return NULL;
    PyObject *out = NULL;
    if (record_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "scan_records before bind()");
    } else if ((records.shared.trace_ids = PyDict_New()) != NULL) {
        out = walk(&ctx, &body, &records);
        Py_DECREF(records.shared.trace_ids);
    }
    PyBuffer_Release(&body);
    return out;
}

/* -- cut_spans: the request without some spans, and those spans framed for later --------- */

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

static int cmp_index(const void *a, const void *b) {
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

/* The ScopeSpans payload [p, end) without the spans in drop, into *kept; the dropped ones go
 * to held. 1: spans remain, 0: none remain, -1: error. */
static int cut_scope(const uint8_t *p, const uint8_t *end, Py_ssize_t i, Py_ssize_t j,
                     PyObject *drop, PyObject *rs_header, PyObject *held, Buf *kept) {
    Py_ssize_t n_drop = PySet_Check(drop) || PyFrozenSet_Check(drop) ? PySet_GET_SIZE(drop) : -1;
    if (n_drop < 0) return PyErr_SetString(PyExc_TypeError, "cut_spans: span indices must be a set"), -1;
    Py_ssize_t *drops = PyMem_Malloc(sizeof(Py_ssize_t) * (n_drop + 1));
    const uint8_t **taken = PyMem_Malloc(sizeof(uint8_t *) * 2 * (n_drop + 1));
    Py_ssize_t *taken_at = PyMem_Malloc(sizeof(Py_ssize_t) * (n_drop + 1));
    Buf header = {0};
    int rc = -1, kept_spans = 0;
    Py_ssize_t n_taken = 0, next = 0, k = -1, at = 0;
    Py_hash_t hash;
    PyObject *item;
    if (drops == NULL || taken == NULL || taken_at == NULL) {
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
        if (next_field(&p, end, &f)) {
            malformed("scope_spans");
            goto done;
        }
        if (f.number == 2 && f.wire == 2) {
            k++;
            if (next < n_drop && drops[next] == k) {
                next++;
                taken[2 * n_taken] = f.data;
                taken[2 * n_taken + 1] = f.data + f.len;
                taken_at[n_taken++] = k;
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
        PyObject *key = Py_BuildValue("(nnn)", i, j, taken_at[n]);
        PyObject *value = Py_BuildValue("(OOy#)", rs_header, ss_header, (const char *)taken[2 * n],
                                        (Py_ssize_t)(taken[2 * n + 1] - taken[2 * n]));
        if (key == NULL || value == NULL || PyDict_SetItem(held, key, value) < 0) rc = -1;
        Py_XDECREF(key);
        Py_XDECREF(value);
    }
    Py_DECREF(ss_header);
done:
    PyMem_Free(drops);
    PyMem_Free(taken);
    PyMem_Free(taken_at);
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
        if (next_field(&q, end, &f)) {
            malformed("resource_spans");
            goto done;
        }
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

static PyObject *cut_spans(PyObject *self, PyObject *args) {
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
        if (next_field(&p, end, &f)) {
            malformed("request");
            goto done;
        }
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

static PyMethodDef methods[] = {
    {"scan_spans", scan_spans, METH_VARARGS,
     "The spans of an OTLP trace request as tuples, decoding only kept attribute keys."},
    {"scan_records", scan_records, METH_VARARGS,
     "The spans of an OTLP trace request as (i, j, k, trace_id, span_id, size, SpanRecord)."},
    {"cut_spans", cut_spans, METH_VARARGS,
     "cut_spans(body, {rs: {ss: {span indices}}}) -> (the rest of body, {(rs, ss, span): "
     "(resource header, scope header, span bytes)})."},
    {"bind", bind, METH_VARARGS,
     "bind(record class, its field names, (UNSET, OK, ERROR), event function): once."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_scan", .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&module); }
