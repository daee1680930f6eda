/*
 * tracescore.otlp._scan: the spans of an OTLP ExportTraceServiceRequest, read straight off
 * the protobuf wire format, decoding only the attribute keys the caller keeps.
 *
 * Why native: in Python every attribute read costs about 1 us, through upb or by hand
 * (reference/performance.md B.1), and that alone was more than the service's whole budget
 * per span. This walks the bytes once and builds only the Python objects the trajectory
 * builder reads. `tracescore.otlp._python_scan` holds the pure-Python twin (used when this module
 * is not built); tests check both give the same answer on every fixture and on fuzzed input.
 *
 * scan_spans(body, keys, classify, decode_value, slow_kv, overhead) -> list of tuples
 *   (rs, ss, span indices, trace_id, span_id, parent_span_id, name, kind, start, end,
 *    status_code, status_message, attributes, attribute_bytes, events, resource, scope)
 * keys: dict, raw key bytes -> kept key str, or None when not kept; filled through
 *   classify(raw_key) on a miss (bounded by the caller's dict size check below).
 * decode_value(raw AnyValue bytes): values other than string, int, double, bool, bytes.
 * slow_kv(raw KeyValue bytes) -> (kept key or None, value): KeyValues in unusual shapes.
 * scan_records(same arguments..., names, resources, resource_fn[, rule]) -> list of tuples
 *   (rs, ss, span indices, trace_id, span_id, attribute_bytes, SpanRecord, candidate): the
 *   candidate flag says whether the span may be an agent span by `rule` (attribute, value,
 *   name prefix, keys; see is_candidate in _records.c), True for every span without one,
 *   so the caller asks its slower question only of candidates. The records are
 *   allocated here and their slots filled directly (building one in Python, through the
 *   dataclass __init__, cost about as much as scanning its span). names: span name -> shared
 *   str; resources: raw resource bytes -> decoded dict, filled by resource_fn on a miss.
 * scan_grouped(the arguments of scan_records) -> (groups, rejects): the same records grouped
 *   by trace for the assembler, so its Python loop runs per trace, not per span. groups:
 *   valid trace id bytes -> (records, attribute_bytes, lead, last_root, candidates,
 *   lead_candidates, first, first_attr), in order of first appearance: the trace's records
 *   in wire order and their summed attribute_bytes; lead: how many records before the first
 *   with attributes; last_root: the index of the last record without a parent, or -1;
 *   candidates: (rs, ss, span indices, record) of the candidate records, the first
 *   lead_candidates of them within the lead; first, first_attr: the wire positions (among all
 *   spans) of the trace's first span and first span with attributes (-1: none). rejects:
 *   (rs, ss, span indices, trace_id, span_id, name) of the spans whose trace id is not 16
 *   or span id not 8 non-zero bytes, in wire order. Records are built as scan_records does.
 * bind(SpanRecord, its field names, (UNSET, OK, ERROR), event_fn): once, before scan_records;
 *   refuses a class whose fields are not exactly the slots filled here.
 * cut_spans(body, {rs: {ss: {span indices}}}) -> (the rest of body, held spans): _cut.c.
 * span_has_key(span, keys) -> whether a Span has an attribute key among keys: _span_keys.c.
 * validate_request(body) -> None, or what makes body no ExportTraceServiceRequest (and where):
 *   upb's verdict without building the message, _validate.c.
 * Raises ValueError on malformed input (callers checked the request first: validate_request),
 * but stands on its own: it reads whatever upb accepts (groups skipped as upb skips them), takes
 * bytes only (never a buffer that could change between its passes), keeps every exception a
 * callback raised, and hashes client-chosen keys with a per-process key (bytes_hash).
 * One Span message is read in _span.c, its attributes in _attributes.c, records live in
 * _records.c (grouped by trace in _grouping.c), the cut in _cut.c, what they share in _scan.h.
 */
#include "_scan.h"

uint64_t tracescore_hash_key[2];

int tracescore_skip_group(const uint8_t **pos, const uint8_t *end, uint32_t number,
                          const uint8_t **content_end) {
    uint32_t open[GROUP_DEPTH_LIMIT];
    int depth = 0;
    const uint8_t *p = *pos;
    uint64_t tag, value;
    open[depth++] = number;
    while (p < end) {
        const uint8_t *at = p;
        if (read_varint(&p, end, &tag) || tag > UINT32_MAX) return -1;
        uint32_t inner = (uint32_t)(tag >> 3); /* upb takes field number 0 inside a group */
        switch (tag & 7) {
        case 0:
            if (read_varint(&p, end, &value)) return -1;
            break;
        case 1:
            if (end - p < 8) return -1;
            p += 8;
            break;
        case 5:
            if (end - p < 4) return -1;
            p += 4;
            break;
        case 2:
            if (read_varint(&p, end, &value) || value > (uint64_t)(end - p)) return -1;
            p += value;
            break;
        case 3:
            if (depth == GROUP_DEPTH_LIMIT) return -1;
            open[depth++] = inner;
            break;
        case 4:
            if (inner != open[depth - 1]) return -1;
            if (--depth == 0) {
                *content_end = at;
                *pos = p;
                return 0;
            }
            break;
        default:
            return -1;
        }
    }
    return -1; /* no end-group tag */
}

/* One Span message to a result tuple (new reference), or NULL. */
static PyObject *span(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Py_ssize_t i,
                      Py_ssize_t j, Py_ssize_t k, PyObject *resource, PyObject *scope) {
    Parsed s;
    if (tracescore_parse_span(ctx, data, len, &s)) return NULL;
    PyObject *items[17] = {
        ITEM(PyLong_FromSsize_t(i)),
        ITEM(PyLong_FromSsize_t(j)),
        ITEM(PyLong_FromSsize_t(k)),
        ITEM(bytes_of(s.trace, s.trace_len)),
        ITEM(bytes_of(s.sid, s.sid_len)),
        ITEM(bytes_of(s.parent, s.parent_len)),
        ITEM(text_of(s.name, s.name_len)),
        ITEM(PyLong_FromLong((int32_t)s.kind)),
        ITEM(PyLong_FromUnsignedLongLong(s.start)),
        ITEM(PyLong_FromUnsignedLongLong(s.stop)),
        ITEM(PyLong_FromLong((int32_t)s.code)),
        ITEM(text_of(s.msg, s.msg_len)),
        s.attrs, /* ownership moves to the tuple */
        ITEM(PyLong_FromSsize_t(s.size)),
        s.events,
        ITEM(Py_NewRef(resource)),
        ITEM(Py_NewRef(scope)),
    };
    return tuple_of(items, 17);
}

/* What a checking scan (Ctx.checking) asks of a field of a ResourceSpans or ScopeSpans: its
 * tag and length, its schema_url (field 3) UTF-8, its resource or scope (field 1, of `kind`,
 * with `depth` left inside) one validate_request accepts there. */
static int checked_field(const uint8_t *start, const Field *f, int depth, int kind) {
    if (!plain_field(start, f)) return 0;
    if (f->wire != 2) return 1;
    if (f->number == 1) return tracescore_check_message(kind, f->data, f->data + f->len, depth);
    if (f->number == 3) return tracescore_check_text(f->data, f->data + f->len);
    return 1;
}

/* Records mode of walk(): where decoded resources and shared strings come from. */
typedef struct {
    Shared shared;
    PyObject *resources;   /* raw resource bytes -> decoded dict (the caller's cache) */
    PyObject *resource_fn; /* raw resource bytes -> decoded dict, filling that cache */
    Grouping *grouping;    /* scan_grouped: spans go to their trace's group, not the list */
} Records;

/* Every span of body, as tuples (records == NULL) or records, appended to a new list. The
 * tables of ctx (and of records->shared) are empty when it starts and when it returns. */
static PyObject *walk(Ctx *ctx, Py_buffer *body, Records *records) {
    Py_ssize_t spans = 0;
    ctx->used = ctx->values_used = 0;
    ctx->first = NULL;
    memset(ctx->key_recent, 0, sizeof ctx->key_recent);
    memset(ctx->value_recent, 0, sizeof ctx->value_recent);
    Py_ssize_t at = 0;
    PyObject *key, *kept;
    while (PyDict_Next(ctx->keys, &at, &key, &kept)) tracescore_table_add(ctx, key, kept);
    PyObject *out = PyList_New(0);
    const uint8_t *p = body->buf, *end = p + body->len;
    Py_ssize_t i = -1;
    Field rs, g, h;
    if (out == NULL) return NULL;
    while (p < end) {
        const uint8_t *field = p;
        if (read_field(&p, end, &rs, "request")) goto fail;
        if (ctx->checking && !plain_field(field, &rs)) goto unsure;
        if (rs.number != 1 || rs.wire != 2) continue;
        i++;
        /* The resource may follow its scope_spans on the wire: find it first. */
        const uint8_t *rs_end = rs.data + rs.len, *q = rs.data;
        const uint8_t *res = NULL;
        Py_ssize_t res_len = 0, j = -1;
        while (q < rs_end) {
            field = q;
            if (read_field(&q, rs_end, &g, "resource_spans")) goto fail;
            if (g.number == 1 && g.wire == 2) { res = g.data; res_len = g.len; }
            if (ctx->checking && !checked_field(field, &g, DEPTH_IN_RESOURCE_SPANS - 1,
                                                CHECK_RESOURCE))
                goto unsure;
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
            if (read_field(&q, rs_end, &g, "resource_spans")) { /* read above: not reached */
                Py_DECREF(resource);
                goto fail;
            }
            if (g.number != 2 || g.wire != 2) continue;
            j++;
            const uint8_t *ss_end = g.data + g.len, *r = g.data;
            const uint8_t *scope_name = NULL;
            Py_ssize_t scope_len = 0, k = -1;
            while (r < ss_end) {
                field = r;
                if (read_field(&r, ss_end, &h, "scope_spans")) {
                    Py_DECREF(resource);
                    goto fail;
                }
                if (ctx->checking &&
                    !checked_field(field, &h, DEPTH_IN_SCOPE_SPANS - 1, CHECK_SCOPE)) {
                    Py_DECREF(resource);
                    goto unsure;
                }
                if (h.number == 1 && h.wire == 2) {
                    const uint8_t *s = h.data, *s_end = h.data + h.len;
                    Field n;
                    /* A repeated scope merges: a later name wins, a missing one keeps it. */
                    while (s < s_end) {
                        if (read_field(&s, s_end, &n, "scope")) {
                            Py_DECREF(resource);
                            goto fail;
                        }
                        if (n.number == 1 && n.wire == 2) { scope_name = n.data; scope_len = n.len; }
                    }
                }
            }
            PyObject *scope = text_of(scope_name, scope_len);
            if (scope == NULL) { Py_DECREF(resource); goto fail; }
            for (r = g.data; r < ss_end;) {
                if (read_field(&r, ss_end, &h, "scope_spans")) { /* read above: not reached */
                    Py_DECREF(scope);
                    Py_DECREF(resource);
                    goto fail;
                }
                if (h.number != 2 || h.wire != 2) continue;
                k++;
                if (++spans % SPANS_PER_GIL_RELEASE == 0) {
                    /* Nothing borrowed is held across this: the tables own what they hold. */
                    Py_BEGIN_ALLOW_THREADS
                    Py_END_ALLOW_THREADS
                }
                if (records != NULL && records->grouping != NULL) {
                    int rc = tracescore_group_span(ctx, &records->shared, records->grouping,
                                                   h.data, h.len, i, j, k, resource, scope);
                    if (rc == 0 && !ctx->unsure) continue;
                    Py_DECREF(scope);
                    Py_DECREF(resource);
                    if (rc == 0) goto unsure;
                    goto fail;
                }
                PyObject *item =
                    records == NULL
                        ? span(ctx, h.data, h.len, i, j, k, resource, scope)
                        : tracescore_span_record(ctx, &records->shared, h.data, h.len, i, j,
                                                 k, resource, scope);
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
    if (ctx->unsure) goto unsure;
    tracescore_values_clear(ctx);
    tracescore_table_clear(ctx);
    return out;
unsure: /* a checking scan met what it cannot vouch for: validate_request decides */
    tracescore_values_clear(ctx);
    tracescore_table_clear(ctx);
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    tracescore_values_clear(ctx);
    tracescore_table_clear(ctx);
    Py_DECREF(out);
    return NULL;
}

/* Only bytes: their contents cannot change while a callback runs between two passes. */
static int body_of(PyObject *obj, Py_buffer *body) {
    body->buf = PyBytes_AS_STRING(obj);
    body->len = PyBytes_GET_SIZE(obj);
    return 0;
}

static PyObject *scan_spans(PyObject *self, PyObject *args) {
    Py_buffer body;
    PyObject *raw;
    Ctx ctx;
    if (!PyArg_ParseTuple(args, "O!O!OOOn", &PyBytes_Type, &raw, &PyDict_Type, &ctx.keys,
                          &ctx.classify, &ctx.decode_value, &ctx.slow_kv, &ctx.overhead))
        return NULL;
    body_of(raw, &body);
    ctx.rule = NULL;
    ctx.checking = ctx.unsure = 0;
    memset(ctx.table, 0, sizeof ctx.table);
    memset(ctx.values, 0, sizeof ctx.values);
    return walk(&ctx, &body, NULL);
}

/* An agent-candidate rule as is_candidate (_records.c) reads it. */
static int valid_rule(PyObject *rule) {
    if (!PyTuple_Check(rule) || PyTuple_GET_SIZE(rule) != 4) return 0;
    PyObject *keys = PyTuple_GET_ITEM(rule, 3);
    if (!PyUnicode_Check(PyTuple_GET_ITEM(rule, 0)) || !PyUnicode_Check(PyTuple_GET_ITEM(rule, 2)) ||
        !PyTuple_Check(keys))
        return 0;
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(keys); n++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(keys, n))) return 0;
    return 1;
}

/* A call's tables (key, value and name tables: about 80 KiB), empty between calls and kept
 * for the next one: zeroing them for every request cost ~550 instructions per span of a
 * 512-span request, about as much as reading its ids and times. One spare, taken and given
 * back with the GIL held; a call that starts while another runs (scans release the GIL)
 * allocates its own. */
typedef struct {
    Ctx ctx;
    Records records;
} Tables;
static Tables *spare_tables;

static Tables *tables_take(void) {
    Tables *t = spare_tables;
    spare_tables = NULL;
    if (t == NULL && (t = PyMem_Calloc(1, sizeof *t)) == NULL) PyErr_NoMemory();
    return t;
}

/* Give back tables a walk left empty (walk and tracescore_shared_clear empty them). */
static void tables_give(Tables *t) {
    if (spare_tables == NULL) spare_tables = t;
    else PyMem_Free(t);
}

/* scan_records and scan_grouped: the same arguments, records as tuples or grouped. */
static PyObject *scan_with(PyObject *args, const char *caller, int grouped) {
    Py_buffer body;
    PyObject *raw;
    Tables *tables = tables_take();
    if (tables == NULL) return NULL;
    Ctx *ctx = &tables->ctx;
    Records *records = &tables->records;
    records->grouping = NULL;
    PyObject *rule = Py_None;
    ctx->checking = ctx->unsure = 0;
    if (!PyArg_ParseTuple(args, "O!O!OOOnO!O!O|Op", &PyBytes_Type, &raw, &PyDict_Type,
                          &ctx->keys, &ctx->classify, &ctx->decode_value, &ctx->slow_kv,
                          &ctx->overhead, &PyDict_Type, &records->shared.names, &PyDict_Type,
                          &records->resources, &records->resource_fn, &rule, &ctx->checking)) {
        tables_give(tables);
        return NULL;
    }
    body_of(raw, &body);
    records->shared.rule = ctx->rule = rule == Py_None ? NULL : rule;
    PyObject *out = NULL;
    if (rule != Py_None && !valid_rule(rule)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: rule must be (str, object, str, tuple of str) or None", caller);
    } else if (!tracescore_records_bound()) {
        PyErr_Format(PyExc_RuntimeError, "%s before bind()", caller);
    } else if (grouped && (records->grouping = tracescore_grouping_new()) == NULL) {
        /* the error is set */
    } else if ((records->shared.trace_ids = PyDict_New()) != NULL) {
        out = walk(ctx, &body, records);
        Py_CLEAR(records->shared.trace_ids);
        tracescore_shared_clear(&records->shared);
        if (out != NULL && out != Py_None && grouped)
            Py_SETREF(out, tracescore_grouping_result(records->grouping));
    }
    if (records->grouping != NULL) tracescore_grouping_free(records->grouping);
    records->grouping = NULL;
    ctx->checking = ctx->unsure = 0;
    tables_give(tables);
    return out;
}

static PyObject *scan_records(PyObject *self, PyObject *args) {
    return scan_with(args, "scan_records", 0);
}

static PyObject *scan_grouped(PyObject *self, PyObject *args) {
    return scan_with(args, "scan_grouped", 1);
}

#ifdef TRACESCORE_FUZZ_COVERAGE
/* The fuzzing build only (scripts/sanitized-build.sh compiles with -fsanitize-coverage=trace-pc
 * and this macro): gcc calls this at every basic block, and the fuzzer keeps the inputs that
 * reach blocks no earlier input reached. gcc has no libFuzzer counters, hence this. */
static uint8_t coverage_seen[1 << 18];
static Py_ssize_t coverage_new;

__attribute__((no_sanitize_coverage)) void __sanitizer_cov_trace_pc(void) {
    uintptr_t pc = (uintptr_t)__builtin_return_address(0);
    size_t slot = (pc ^ (pc >> 18)) & ((1 << 18) - 1);
    if (!coverage_seen[slot]) {
        coverage_seen[slot] = 1;
        coverage_new++;
    }
}

static PyObject *coverage_news(PyObject *self, PyObject *unused) {
    Py_ssize_t news = coverage_new;
    coverage_new = 0;
    return PyLong_FromSsize_t(news);
}
#endif

static PyMethodDef methods[] = {
#ifdef TRACESCORE_FUZZ_COVERAGE
    {"coverage_news", coverage_news, METH_NOARGS,
     "Basic blocks first reached since the last call (fuzzing builds only)."},
#endif
    {"scan_spans", scan_spans, METH_VARARGS,
     "The spans of an OTLP trace request as tuples, decoding only kept attribute keys."},
    {"scan_records", scan_records, METH_VARARGS,
     "The spans of an OTLP trace request as (i, j, k, trace_id, span_id, size, SpanRecord, "
     "candidate)."},
    {"scan_grouped", scan_grouped, METH_VARARGS,
     "The spans of an OTLP trace request grouped by trace: ({trace_id: (records, size, lead, "
     "last_root, candidates, lead_candidates, first, first_attr)}, rejects)."},
    {"cut_spans", tracescore_cut_spans, METH_VARARGS,
     "cut_spans(body, {rs: {ss: {span indices}}}) -> (the rest of body, {(rs, ss, span): "
     "(resource header, scope header, span bytes)})."},
    {"bind", tracescore_bind, METH_VARARGS,
     "bind(record class, its field names, (UNSET, OK, ERROR), event function): once."},
    {"span_has_key", tracescore_span_has_key, METH_VARARGS,
     "span_has_key(span, keys) -> whether the Span has an attribute key in keys, or None "
     "(_span_keys.c)."},
    {"validate_request", tracescore_validate_request, METH_O,
     "validate_request(body) -> None, or what makes body no ExportTraceServiceRequest "
     "(_validate.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_scan", .m_size = -1, .m_methods = methods,
};

/* bytes_hash's key: 16 random bytes from os.urandom, new in every process. */
static int seed_hash(void) {
    PyObject *os = PyImport_ImportModule("os");
    PyObject *seed = os == NULL ? NULL : PyObject_CallMethod(os, "urandom", "i", 16);
    Py_XDECREF(os);
    if (seed == NULL) return -1;
    if (!PyBytes_Check(seed) || PyBytes_GET_SIZE(seed) != 16) {
        Py_DECREF(seed);
        PyErr_SetString(PyExc_RuntimeError, "os.urandom(16) gave no 16 bytes");
        return -1;
    }
    memcpy(tracescore_hash_key, PyBytes_AS_STRING(seed), 16);
    Py_DECREF(seed);
    return 0;
}

PyMODINIT_FUNC PyInit__scan(void) {
    if (seed_hash() < 0) return NULL;
    tracescore_hex_init();
    return PyModule_Create(&module);
}
