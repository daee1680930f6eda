/* One Span message read off the wire into a Parsed (tracescore.otlp._scan, see _scan.c): its
 * ids, name, kind, times and status in place, its attributes through _attributes.c. */
#include "_scan.h"

static void parsed_clear(Parsed *s) {
    Py_CLEAR(s->attrs);
    Py_CLEAR(s->events);
}

/* What a checking scan asks of a Span field it reads through next_field (see _scan.h): its
 * tag and length, and the string or message in it where the schema has one. */
static int checked_field(const uint8_t *start, const Field *f) {
    if (!plain_field(start, f)) return 0;
    if (f->wire != 2) return 1;
    const uint8_t *p = f->data, *end = f->data + f->len;
    int depth = DEPTH_IN_SPAN - 1;
    switch (f->number) {
    case 3: /* trace_state */
    case 5: /* name */
        return tracescore_check_text(p, end);
    case 9: /* attributes: checked as they are read (_attributes.c) */
        return 1;
    case 11: return tracescore_check_message(CHECK_EVENT, p, end, depth);
    case 13: return tracescore_check_message(CHECK_LINK, p, end, depth);
    case 15: return tracescore_check_message(CHECK_STATUS, p, end, depth);
    default: return 1; /* bytes, or unknown */
    }
}

/* Read one Span message into *s; 0 on success, -1 (exception set, nothing owned) on error. */
int tracescore_parse_span(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Parsed *s) {
    const uint8_t *p = data, *end = data + len;
    PyObject *events = NULL;
    memset(s, 0, sizeof *s);
    s->prefixed = -1;
    if ((s->attrs = PyDict_New()) == NULL) return -1;
    Field f;
    uint64_t n;
    while (p < end) {
        /* Most fields of a span are attributes (field 9, wire 2: tag 0x4A): straight to them. */
        const uint8_t *q = p + 1;
        if (*p == 0x4A && read_varint(&q, end, &n) == 0 && n <= (uint64_t)(end - q)) {
            if (ctx->checking && q - p > 6) ctx->unsure = 1; /* a length of over 5 bytes */
            if (tracescore_key_value(ctx, q, (Py_ssize_t)n, s)) goto fail;
            p = q + n;
            continue;
        }
        /* The other usual fields, one-byte tags, read in place: the general field reader
         * took a tenth of the scan for them. Anything else takes it, as before. */
        Py_ssize_t left = end - p;
        switch (*p) {
        case 0x0A: /* trace_id, span_id, parent_span_id, name: short bytes */
        case 0x12:
        case 0x22:
        case 0x2A:
            if (left >= 2 && p[1] < 0x80 && p[1] <= left - 2) {
                const uint8_t *at = p + 2;
                Py_ssize_t size = p[1];
                if (*p == 0x0A) { s->trace = at; s->trace_len = size; }
                else if (*p == 0x12) { s->sid = at; s->sid_len = size; }
                else if (*p == 0x22) { s->parent = at; s->parent_len = size; }
                else {
                    s->name = at;
                    s->name_len = size;
                    if (ctx->checking && !tracescore_check_text(at, at + size)) ctx->unsure = 1;
                }
                p = at + size;
                continue;
            }
            break;
        case 0x30: /* kind: a one-byte varint */
            if (left >= 2 && p[1] < 0x80) {
                s->kind = p[1];
                p += 2;
                continue;
            }
            break;
        case 0x39: /* start and end times: fixed64 */
        case 0x41:
            if (left >= 9) {
                if (*p == 0x39) s->start = little_endian(p + 1, 8);
                else s->stop = little_endian(p + 1, 8);
                p += 9;
                continue;
            }
            break;
        default:
            break;
        }
        const uint8_t *field = p;
        if (read_field(&p, end, &f, "span")) goto fail;
        if (ctx->checking && !checked_field(field, &f)) ctx->unsure = 1;
        switch (f.number) {
        case 1: if (f.wire == 2) { s->trace = f.data; s->trace_len = f.len; } break;
        case 2: if (f.wire == 2) { s->sid = f.data; s->sid_len = f.len; } break;
        case 4: if (f.wire == 2) { s->parent = f.data; s->parent_len = f.len; } break;
        case 5: if (f.wire == 2) { s->name = f.data; s->name_len = f.len; } break;
        case 6: if (f.wire == 0) s->kind = f.value; break;
        case 7: if (f.wire == 1) s->start = f.value; break;
        case 8: if (f.wire == 1) s->stop = f.value; break;
        case 9:
            if (f.wire == 2 && tracescore_key_value(ctx, f.data, f.len, s)) goto fail;
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
                    if (read_field(&q, qend, &g, "span status")) goto fail;
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
    if (s->name_len > LONG_TEXT) s->size += s->name_len; /* not shared: see LONG_TEXT */
    if (s->msg_len > LONG_TEXT) s->size += s->msg_len;
    return 0;
fail:
    Py_XDECREF(events);
    parsed_clear(s);
    return -1;
}
