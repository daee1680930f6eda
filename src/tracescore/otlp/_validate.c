/*
 * validate_request(body) -> None when body is an ExportTraceServiceRequest upb would parse, or
 * a str naming what is wrong and where ("resource_spans[0].scope_spans[1].spans[3].name:
 * invalid UTF-8").
 *
 * Why: the receivers parsed every protobuf body with upb only to refuse malformed input, then
 * threw the message away (the scanner reads the bytes); building and freeing it was about 5%
 * of serve's main thread. This walks the wire format once, building nothing, and accepts
 * exactly what upb's decoder accepts (upb/wire/decode.c), which the scanner relies on:
 * - tags and lengths of at most 5 bytes, tags of 32 bits, varints of at most 10 bytes, wire
 *   types 6 and 7 refused, field number 0 refused outside groups (upb takes it inside one),
 *   lengths and fixed-size values inside their message;
 * - known fields with an unexpected wire type, and unknown fields, skipped as unknown (proto3
 *   scalar fields need no check at all: any well-formed value is accepted);
 * - groups (start/end tags) matched, their contents walked as an unknown message;
 * - UTF-8 checked on proto3 string fields sent length-delimited, not on bytes or unknowns;
 * - upb's depth limit: 100 nested messages or groups below the request, an empty one counts.
 * tests/otlp/test_validate.py checks the schema below against the installed descriptors and
 * the verdicts against upb on fuzzed requests.
 */
#include "_scan.h"

#define DEPTH_LIMIT 100 /* upb's kUpb_WireFormat_DefaultDepthLimit, as protobuf's Python uses */
#define PATH_LIMIT 128  /* path steps named in a message; deeper ones are left out */
#define NOT_GROUP UINT32_MAX /* walk_message's `group` for a message: no field has it */

enum { SKIP = 0, TEXT, MESSAGE };

typedef struct Schema Schema;

typedef struct {
    const char *name;   /* NULL: unknown (any wire type is skipped) */
    int kind;           /* SKIP: a scalar or bytes field; TEXT: a string; MESSAGE: see type */
    int repeated;       /* named with its index in messages */
    const Schema *type; /* MESSAGE only */
} Rule;

/* Rules by field number (0 is never a field); numbers above any OTLP trace message uses are
 * unknown. Indexing, not searching: this runs for every field of every request. */
#define TOP_FIELD 16
struct Schema {
    Rule fields[TOP_FIELD + 1];
};

/* opentelemetry-proto 1.x: collector/trace/v1, trace/v1, resource/v1, common/v1. Only string
 * and message fields need a rule: every well-formed value of any other field is accepted. */
static const Schema KEY_VALUE, ANY_VALUE, ARRAY_VALUE, KEY_VALUE_LIST, ENTITY_REF, RESOURCE,
    SCOPE, EVENT, LINK, STATUS, SPAN, SCOPE_SPANS, RESOURCE_SPANS, REQUEST;
static const Schema UNKNOWN; /* a group's contents: every field unknown */

#define TEXT_FIELD(name) {name, TEXT, 0, NULL}
#define TEXTS_FIELD(name) {name, TEXT, 1, NULL}
#define MESSAGE_FIELD(name, type) {name, MESSAGE, 0, &type}
#define MESSAGES_FIELD(name, type) {name, MESSAGE, 1, &type}

static const Schema KEY_VALUE = {{[1] = TEXT_FIELD("key"),
                                  [2] = MESSAGE_FIELD("value", ANY_VALUE)}};
static const Schema ANY_VALUE = {{[1] = TEXT_FIELD("string_value"),
                                  [5] = MESSAGE_FIELD("array_value", ARRAY_VALUE),
                                  [6] = MESSAGE_FIELD("kvlist_value", KEY_VALUE_LIST)}};
static const Schema ARRAY_VALUE = {{[1] = MESSAGES_FIELD("values", ANY_VALUE)}};
static const Schema KEY_VALUE_LIST = {{[1] = MESSAGES_FIELD("values", KEY_VALUE)}};
static const Schema ENTITY_REF = {{[1] = TEXT_FIELD("schema_url"), [2] = TEXT_FIELD("type"),
                                   [3] = TEXTS_FIELD("id_keys"),
                                   [4] = TEXTS_FIELD("description_keys")}};
static const Schema RESOURCE = {{[1] = MESSAGES_FIELD("attributes", KEY_VALUE),
                                 [3] = MESSAGES_FIELD("entity_refs", ENTITY_REF)}};
static const Schema SCOPE = {{[1] = TEXT_FIELD("name"), [2] = TEXT_FIELD("version"),
                              [3] = MESSAGES_FIELD("attributes", KEY_VALUE)}};
static const Schema EVENT = {{[2] = TEXT_FIELD("name"),
                              [3] = MESSAGES_FIELD("attributes", KEY_VALUE)}};
static const Schema LINK = {{[3] = TEXT_FIELD("trace_state"),
                             [4] = MESSAGES_FIELD("attributes", KEY_VALUE)}};
static const Schema STATUS = {{[2] = TEXT_FIELD("message")}};
static const Schema SPAN = {{[3] = TEXT_FIELD("trace_state"), [5] = TEXT_FIELD("name"),
                             [9] = MESSAGES_FIELD("attributes", KEY_VALUE),
                             [11] = MESSAGES_FIELD("events", EVENT),
                             [13] = MESSAGES_FIELD("links", LINK),
                             [15] = MESSAGE_FIELD("status", STATUS)}};
static const Schema SCOPE_SPANS = {{[1] = MESSAGE_FIELD("scope", SCOPE),
                                    [2] = MESSAGES_FIELD("spans", SPAN),
                                    [3] = TEXT_FIELD("schema_url")}};
static const Schema RESOURCE_SPANS = {{[1] = MESSAGE_FIELD("resource", RESOURCE),
                                       [2] = MESSAGES_FIELD("scope_spans", SCOPE_SPANS),
                                       [3] = TEXT_FIELD("schema_url")}};
static const Schema REQUEST = {{[1] = MESSAGES_FIELD("resource_spans", RESOURCE_SPANS)}};
static const Schema UNKNOWN = {{{NULL, SKIP, 0, NULL}}};

/* One step of the path to a problem: a field of the message above, recorded on the way out. */
typedef struct {
    const Rule *rule; /* of an unknown group: one without a name */
    uint32_t number;
    Py_ssize_t index; /* of a repeated field's element */
} Step;

typedef struct {
    int depth;           /* nesting left, counted as upb counts it */
    const char *problem; /* static text */
    Py_ssize_t at;       /* byte offset of the problem in the body */
    const uint8_t *body, *body_end;
    int steps;
    Step path[PATH_LIMIT];
} Walk;

static const uint8_t *fail(Walk *w, const uint8_t *at, const char *problem) {
    w->problem = problem;
    w->at = at - w->body;
    return NULL;
}

/* Strict UTF-8, as upb's utf8_range and Python's decoder check it: no overlong forms, no
 * surrogates, nothing above U+10FFFF. ASCII, most of every request, goes 8 bytes a step. */
static int utf8_valid(const uint8_t *p, const uint8_t *end) {
    for (;;) {
        uint64_t word;
        while (end - p >= 8) {
            memcpy(&word, p, 8);
            if (word & 0x8080808080808080ULL) break;
            p += 8;
        }
        if (p >= end) return 1;
        uint8_t c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        Py_ssize_t need = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
        if (need == 0 || end - p < need) return 0;
        /* The second byte's range is narrower after E0 (overlong), ED (surrogates), F0
         * (overlong) and F4 (above U+10FFFF). */
        uint8_t low = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
        uint8_t high = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        if (p[1] < low || p[1] > high) return 0;
        for (Py_ssize_t m = 2; m < need; m++)
            if ((p[m] & 0xC0) != 0x80) return 0;
        p += need;
    }
}

static const uint8_t *walk_message(Walk *w, const Schema *schema, const uint8_t *p,
                                   const uint8_t *end, uint32_t group);

/* Whether [p, end), a KeyValue payload, is one upb accepts in the usual encoding: an ASCII
 * key, then at most one value that plain_any_value accepts, with room for the value's nesting
 * under the depth limit. 0 leaves it to walk_message, which gives the verdict: attributes are
 * most of a request's fields, and two nested walks for each were a fifth of serve's work. */
static int plain_key_value(const Walk *w, const uint8_t *p, const uint8_t *end) {
    if (w->depth < 1 || end - p < 2 || p[0] != 0x0A || p[1] >= 0x80 || p[1] > end - p - 2)
        return 0;
    const uint8_t *key = p + 2, *key_end = key + p[1];
    if (!tracescore_ascii_only(key, key_end, w->body, w->body_end)) return 0;
    if (key_end == end) return 1;
    p = key_end;
    uint64_t value;
    const uint8_t *at = ++p;
    return key_end[0] == 0x12 && read_varint(&p, end, &value) == 0 && p - at <= 5 &&
           value == (uint64_t)(end - p) &&
           tracescore_plain_any_value(p, end, w->body, w->body_end);
}

/* How many `number` fields sent length-delimited come before `stop` in the message at
 * `start`: a repeated field's index. Only on the error path; those bytes were walked. */
static Py_ssize_t index_of(const uint8_t *start, const uint8_t *stop, uint32_t number) {
    Walk scratch = {.depth = 1 << 30, .body = start};
    Py_ssize_t index = 0;
    const uint8_t *p = start;
    while (p < stop) {
        uint64_t tag = 0, value = 0;
        read_varint(&p, stop, &tag);
        int wire = (int)(tag & 7);
        if (wire == 0) {
            read_varint(&p, stop, &value);
        } else if (wire == 1) {
            p += 8;
        } else if (wire == 5) {
            p += 4;
        } else if (wire == 2) {
            read_varint(&p, stop, &value);
            p += value;
            index += (uint32_t)(tag >> 3) == number;
        } else {
            p = walk_message(&scratch, &UNKNOWN, p, stop, (uint32_t)(tag >> 3));
            if (p == NULL) break;
        }
    }
    return index;
}

static void record_step(Walk *w, const Rule *rule, uint32_t number, const uint8_t *start,
                        const uint8_t *field) {
    if (w->steps == PATH_LIMIT) return;
    Step *step = &w->path[w->steps++];
    step->rule = rule;
    step->number = number;
    step->index = rule->repeated ? index_of(start, field, number) : -1;
}

/* Walk the fields of one message from p to end, or, for a group (group: its field number;
 * schema: UNKNOWN), to its end-group tag. Returns where the walk stopped, or NULL with
 * w->problem set. */
static const uint8_t *walk_message(Walk *w, const Schema *schema, const uint8_t *p,
                                   const uint8_t *end, uint32_t group) {
    const uint8_t *start = p;
    while (p < end) {
        const uint8_t *field = p, *length;
        uint64_t tag, value;
        if (read_varint(&p, end, &tag) || p - field > 5 || tag > UINT32_MAX)
            return fail(w, field, "malformed field tag");
        uint32_t number = (uint32_t)(tag >> 3);
        int wire = (int)(tag & 7);
        /* upb refuses field number 0 in a message, not inside a group. */
        if (number == 0 && schema != &UNKNOWN) return fail(w, field, "field number 0");
        const Rule *rule = &schema->fields[number <= TOP_FIELD ? number : 0];
        switch (wire) {
        case 0:
            /* At most 10 bytes: upb ignores the excess bits of the tenth, so does this. */
            if (read_varint(&p, end, &value)) return fail(w, field, "malformed varint");
            break;
        case 1:
            if (end - p < 8) return fail(w, field, "truncated fixed64");
            p += 8;
            break;
        case 5:
            if (end - p < 4) return fail(w, field, "truncated fixed32");
            p += 4;
            break;
        case 2:
            length = p;
            /* upb reads a length as a 32-bit varint: at most 5 bytes. */
            if (read_varint(&p, end, &value) || p - length > 5)
                return fail(w, field, "malformed length");
            if (value > (uint64_t)(end - p))
                return fail(w, field, "length runs past the end of its message");
            if (rule->kind == TEXT &&
                !tracescore_ascii_only(p, p + value, w->body, w->body_end) &&
                !utf8_valid(p, p + value)) {
                fail(w, field, "invalid UTF-8");
                record_step(w, rule, number, start, field);
                return NULL;
            }
            if (rule->kind == MESSAGE) {
                if (--w->depth < 0) fail(w, field, "nested more than 100 messages deep");
                if (w->depth < 0 ||
                    (!(rule->type == &KEY_VALUE && plain_key_value(w, p, p + value)) &&
                     walk_message(w, rule->type, p, p + value, NOT_GROUP) == NULL)) {
                    record_step(w, rule, number, start, field);
                    return NULL;
                }
                w->depth++;
            }
            p += value;
            break;
        case 3:
            if (--w->depth < 0) fail(w, field, "nested more than 100 messages deep");
            p = w->depth < 0 ? NULL : walk_message(w, &UNKNOWN, p, end, number);
            if (p == NULL) {
                record_step(w, &UNKNOWN.fields[0], number, start, field);
                return NULL;
            }
            w->depth++;
            break;
        case 4:
            if (number != group) return fail(w, field, "end-group tag without its start-group");
            return p;
        default:
            return fail(w, field, "invalid wire type");
        }
    }
    if (group != NOT_GROUP) return fail(w, end, "group without its end-group tag");
    return p;
}

/* The checks a checking scan asks of the parts it reads (see _scan.h): the same walk, on one
 * message, its verdict only. */
static const Schema *const CHECKED[] = {
    [CHECK_RESOURCE] = &RESOURCE, [CHECK_SCOPE] = &SCOPE, [CHECK_KEY_VALUE] = &KEY_VALUE,
    [CHECK_EVENT] = &EVENT,       [CHECK_LINK] = &LINK,   [CHECK_STATUS] = &STATUS,
};

/* A walk of [p, end) with `depth` left. Its path is left unset, not zeroed: 3 KiB, and these
 * run per attribute (the path is written before it is read, on the error path only). */
static inline void walk_start(Walk *w, const uint8_t *p, const uint8_t *end, int depth) {
    w->depth = depth;
    w->problem = NULL;
    w->at = 0;
    w->body = p;
    w->body_end = end;
    w->steps = 0;
}

int tracescore_check_message(int kind, const uint8_t *p, const uint8_t *end, int depth) {
    Walk w;
    walk_start(&w, p, end, depth);
    if (kind == CHECK_KEY_VALUE && plain_key_value(&w, p, end)) return 1;
    return walk_message(&w, CHECKED[kind], p, end, NOT_GROUP) != NULL;
}

int tracescore_check_text(const uint8_t *p, const uint8_t *end) {
    return tracescore_ascii_only(p, end, p, end) || utf8_valid(p, end);
}

int tracescore_check_any_value(const uint8_t *p, const uint8_t *end, int depth) {
    Walk w;
    walk_start(&w, p, end, depth - 1);
    if (depth >= 1 && tracescore_plain_any_value(p, end, p, end)) return 1;
    return w.depth >= 0 && walk_message(&w, &ANY_VALUE, p, end, NOT_GROUP) != NULL;
}

/* "resource_spans[0].scope_spans[1].spans[3].name: invalid UTF-8 (byte 1234)"; of a path
 * longer than SHOWN_STEPS, the outer and inner ends. */
#define SHOWN_STEPS 12
static PyObject *describe(Walk *w) {
    PyObject *parts = PyList_New(0);
    if (parts == NULL) return NULL;
    int hidden = w->steps > SHOWN_STEPS ? w->steps - SHOWN_STEPS : 0;
    for (int s = w->steps - 1; s >= 0; s--) {
        Step *step = &w->path[s];
        PyObject *part;
        if (hidden && s == w->steps - 1 - SHOWN_STEPS / 2) {
            part = PyUnicode_FromFormat("(%d more)", hidden);
            s -= hidden - 1;
        } else if (step->rule->name == NULL)
            part = PyUnicode_FromFormat("group %u", (unsigned)step->number);
        else if (step->index >= 0)
            part = PyUnicode_FromFormat("%s[%zd]", step->rule->name, step->index);
        else
            part = PyUnicode_FromString(step->rule->name);
        if (part == NULL || PyList_Append(parts, part) < 0) {
            Py_XDECREF(part);
            Py_DECREF(parts);
            return NULL;
        }
        Py_DECREF(part);
    }
    PyObject *where = NULL, *dot = PyUnicode_FromString(".");
    if (dot != NULL) where = PyUnicode_Join(dot, parts);
    Py_XDECREF(dot);
    Py_DECREF(parts);
    if (where == NULL) return NULL;
    PyObject *out = PyUnicode_GET_LENGTH(where) == 0
                        ? PyUnicode_FromFormat("%s (byte %zd)", w->problem, w->at)
                        : PyUnicode_FromFormat("%U: %s (byte %zd)", where, w->problem, w->at);
    Py_DECREF(where);
    return out;
}

PyObject *tracescore_validate_request(PyObject *self, PyObject *body) {
    if (!PyBytes_Check(body)) {
        PyErr_SetString(PyExc_TypeError, "validate_request takes bytes");
        return NULL;
    }
    Walk w;
    w.depth = DEPTH_LIMIT;
    w.body = (const uint8_t *)PyBytes_AS_STRING(body);
    w.body_end = w.body + PyBytes_GET_SIZE(body);
    w.steps = 0;
    w.problem = NULL;
    const uint8_t *walked;
    if (PyBytes_GET_SIZE(body) < (1 << 16)) {
        walked = walk_message(&w, &REQUEST, w.body, w.body_end, NOT_GROUP);
    } else {
        /* The walk reads only the bytes (immutable, and held by the caller's reference):
         * other threads run meanwhile, as the receivers check large bodies off the loop. */
        Py_BEGIN_ALLOW_THREADS
        walked = walk_message(&w, &REQUEST, w.body, w.body_end, NOT_GROUP);
        Py_END_ALLOW_THREADS
    }
    if (walked != NULL) Py_RETURN_NONE;
    return describe(&w);
}
