/* What the parts of the tracescore.otlp._scan extension share: protobuf wire reading, the
 * scan context, one parsed Span, and the functions one file defines for another. */
#ifndef TRACESCORE_SCAN_H
#define TRACESCORE_SCAN_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define KEY_CACHE_LIMIT 8192
/* Longer keys are classified at each use and not cached (nor span names shared past
 * NAME_SHARE_MAX): a client choosing 1 MiB keys would otherwise fill the caches with gigabytes.
 * Such strings are held per record instead, and counted in its size (LONG_TEXT). */
#define KEY_CACHE_MAX 256
#define NAME_SHARE_MAX 256
/* A kept key, span name or status message longer than this is a str of its own in each record:
 * its length counts in the record's size (the bound assembly.max_bytes checks). */
#define LONG_TEXT 256
/* Nested groups skipped at most (upb's depth limit for messages and groups together). */
#define GROUP_DEPTH_LIMIT 100
/* Spans scanned between two releases of the GIL: a request of 512k spans takes seconds, and
 * other threads (the receiver's event loop answering /healthz) must run meanwhile. */
#define SPANS_PER_GIL_RELEASE 1024

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

typedef struct Slot Slot;
struct Slot {
    const char *data;
    Py_ssize_t len;
    uint64_t hash;
    /* The key that followed this one in the last span that had both, or NULL: a span's keys
     * come in its instrumentation's order, so the next key is most often this one's and is
     * found by one compare instead of hashing it (the hash was a third of the scan). */
    Slot *next;
    PyObject *kept; /* the key's str, or None when not kept (held through `answer`) */
    /* NULL, or a key kept only when its string value holds one of these texts (bytes; see
     * `SpanReader`'s `kept_when`), held through `answer`. */
    PyObject *needles;
    /* Owned for the call: the key's bytes (`data` points into it) and classify's answer, so
     * a callback that empties the caller's dict cannot free what the table points at. */
    PyObject *key, *answer;
    int rule;       /* what the kept key is to the candidate rule: RULE_* bits */
    int text_ok;    /* whether the key's bytes are UTF-8 (a checking scan's question) */
    /* String values of the key found in / missing from the value table during this call:
     * a key whose values do not repeat (ids, arguments) stops looking them up there. */
    int value_hits, value_misses;
    /* The value table's slot of this key's last string value, or NULL: compared before the
     * value is hashed (a model, tool or agent name repeats span after span). */
    struct TextSlot *last_value;
};

/* A kept key is the rule's attribute, one of its keys, or (RULE_UNSURE) not known to be
 * neither: the candidate test then asks the attributes dict, as without these bits. */
enum { RULE_ATTRIBUTE = 1, RULE_KEY = 2, RULE_UNSURE = 4 };

/* String attribute values decoded in this call: raw bytes (in the request) -> the str made
 * once (owned). Most attribute values repeat across the spans of a request ("chat", model,
 * tool and agent names): sharing one str spares decoding, allocating and later freeing one
 * per span. Values longer than VALUE_CACHE_MAX are not looked for (few of them repeat). */
#define VALUE_TABLE_SIZE 512
#define VALUE_TABLE_FILL 256
#define VALUE_CACHE_MAX 128
/* A key stops looking its values up after this many misses, unless half of them hit. */
#define VALUE_MISSES_TRIED 16
/* Bits of quick_mix choosing a recent slot (recent_index): the key and value tables (Ctx) and
 * the span name table (Shared) each keep 1 << RECENT_SLOT_BITS of them. */
#define RECENT_SLOT_BITS 6
/* A slot of the per-call tables of str made from raw bytes in the request (string values here,
 * span names in Shared): open addressing over bytes_hash, at most half full (text_slot). */
typedef struct TextSlot {
    const uint8_t *data;
    Py_ssize_t len;
    uint64_t hash;
    PyObject *text; /* owned; NULL: a free slot */
    int prefixed;   /* span names: whether it starts with the rule's name prefix, -1: not known */
} TextSlot;

typedef struct {
    PyObject *keys;
    PyObject *classify;
    PyObject *decode_value;
    PyObject *slow_kv;
    Py_ssize_t overhead;
    PyObject *rule; /* the agent-candidate rule (see Shared), or NULL */
    int used, values_used;
    /* scan_grouped(..., check=True): the scan also tests what validate_request would, where
     * it reads the bytes anyway; `unsure` once it met something it cannot vouch for (then the
     * caller asks validate_request). Both 0 otherwise. */
    int checking, unsure;
    Slot *first; /* the key of the last span's first attribute (see Slot.next), or NULL */
    Slot table[TABLE_SIZE];
    TextSlot values[VALUE_TABLE_SIZE];
    /* Filled slots of the two tables by quick_mix of their bytes (recent_index), or
     * NULL: looked at before a key or value that its own guess (Slot.next, last_value)
     * missed is hashed. Spans of a request alternate between a few shapes (chat, tool), and
     * those guesses missed at each change, for a SipHash each. Emptied as a call starts. */
    Slot *key_recent[1 << RECENT_SLOT_BITS];
    TextSlot *value_recent[1 << RECENT_SLOT_BITS];
} Ctx;

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

/* Skip a group's fields up to its end-group tag (*pos: after the start tag; number: the
 * group's); *content_end: where the end tag starts. 0, or -1 when malformed (_scan.c). */
int tracescore_skip_group(const uint8_t **pos, const uint8_t *end, uint32_t number,
                          const uint8_t **content_end);

static inline uint64_t little_endian(const uint8_t *p, int n) {
    /* Written out so the compiler makes one load of it; a loop over n was 1% of the scan. */
    uint64_t low = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
                   (uint64_t)p[3] << 24;
    if (n == 4) return low;
    return low | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

/* The next field at *pos; 0 on success, -1 when malformed. A group (wire type 3) is skipped as
 * upb skips an unknown one, its contents in data/len; a stray end-group tag is malformed. */
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
    case 3: {
        const uint8_t *content = *pos, *content_end;
        if (tag > UINT32_MAX || tracescore_skip_group(pos, end, f->number, &content_end))
            return -1;
        f->data = content;
        f->len = content_end - content;
        return 0;
    }
    default:
        return -1;
    }
}

static inline PyObject *malformed(const char *what) {
    PyErr_Format(PyExc_ValueError, "malformed OTLP request: %s", what);
    return NULL;
}

/* next_field; on malformed bytes, a ValueError naming `what` is set and -1 returned. */
static inline int read_field(const uint8_t **pos, const uint8_t *end, Field *f, const char *what) {
    if (next_field(pos, end, f) == 0) return 0;
    malformed(what);
    return -1;
}

/* 16 (trace) or 8 (span) bytes, not all zero: what OTLP requires of ids. */
static inline int valid_id(const uint8_t *data, Py_ssize_t len, Py_ssize_t want) {
    uint8_t any = 0;
    if (len != want) return 0;
    for (Py_ssize_t n = 0; n < len; n++) any |= data[n];
    return any != 0;
}

static inline PyObject *bytes_of(const uint8_t *data, Py_ssize_t len) {
    return PyBytes_FromStringAndSize(data ? (const char *)data : "", len);
}

static inline PyObject *text_of(const uint8_t *data, Py_ssize_t len) {
    return PyUnicode_DecodeUTF8(data ? (const char *)data : "", len, NULL);
}

/* A tuple of n new references (stolen, also on failure), or NULL when any is NULL. */
/* One item of an array for tuple_of, made only while none made before it failed: a C API call
 * made with an exception set loses it or raises SystemError (the fuzzer found a span whose name
 * was not UTF-8 and whose status message was then decoded with the UnicodeDecodeError set).
 * Items are made in an unspecified order, so every call that can fail goes through this. */
#define ITEM(expr) (PyErr_Occurred() ? NULL : (expr))

/* A tuple of n owned items (stolen), or NULL, the items released, when one is NULL. */
static inline PyObject *tuple_of(PyObject **items, int n) {
    PyObject *out = NULL;
    int complete = 1;
    for (int m = 0; m < n; m++) complete &= items[m] != NULL;
    if (complete) out = PyTuple_New(n);
    if (out == NULL) {
        for (int q = 0; q < n; q++) Py_XDECREF(items[q]);
        return NULL;
    }
    for (int m = 0; m < n; m++) PyTuple_SET_ITEM(out, m, items[m]);
    return out;
}

/* What one Span message holds, as pointers into the request (attrs and events are owned). */
typedef struct {
    const uint8_t *trace, *sid, *parent, *name, *msg;
    Py_ssize_t trace_len, sid_len, parent_len, name_len, msg_len;
    uint64_t kind, start, stop, code;
    Py_ssize_t size;
    PyObject *attrs;  /* dict of kept attributes */
    PyObject *events; /* tuple of raw Span.Event bytes */
    /* What the candidate rule asks of attrs, noted as they were kept: the value of its
     * attribute (borrowed from attrs), whether one of its keys was kept, and whether some
     * attribute came another way (then the rule asks attrs itself). */
    PyObject *rule_value;
    int rule_key, rule_unsure;
    int prefixed; /* whether the name starts with the rule's prefix, -1: not known */
    Slot *last_key; /* the slot of this span's previous attribute key, or NULL */
} Parsed;

/* The per-process random key of bytes_hash, set when the module is imported (_scan.c). */
extern uint64_t tracescore_hash_key[2];

#define SIP_ROTATE(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_HALF_ROUND(a, b, c, d, s, t) \
    a += b; c += d; b = SIP_ROTATE(b, s) ^ a; d = SIP_ROTATE(d, t) ^ c; a = SIP_ROTATE(a, 32);
#define SIP_ROUND(v0, v1, v2, v3) \
    SIP_HALF_ROUND(v0, v1, v2, v3, 13, 16); SIP_HALF_ROUND(v2, v1, v0, v3, 17, 21);

/* A hash of raw bytes for the tables fed by the client's bytes (attribute keys, string values,
 * span names, trace ids): SipHash-1-3, as CPython hashes str and bytes, keyed per process. The
 * unkeyed mix of a key's first and last 8 bytes it replaces let a client pick 64k trace ids
 * that all hashed alike, and one request then took 15 s, all of it with the GIL held. */
static inline uint64_t bytes_hash(const uint8_t *p, Py_ssize_t n) {
    uint64_t k0 = tracescore_hash_key[0], k1 = tracescore_hash_key[1];
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    uint64_t b = (uint64_t)n << 56, m;
    for (; n >= 8; n -= 8, p += 8) {
        m = little_endian(p, 8);
        v3 ^= m;
        SIP_ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    for (int k = 0; k < n; k++) b |= (uint64_t)p[k] << (8 * k);
    v3 ^= b;
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    return (v0 ^ v1) ^ (v2 ^ v3);
}

static inline uint64_t load_word(const uint8_t *p) {
    uint64_t word;
    memcpy(&word, p, 8);
    return word;
}

/* Whether a slot's bytes are [data, data + len), compared inline a word at a time (the last
 * word overlapping the others): a call to memcmp for each attribute key's guess (~9 a span,
 * keys of 10-40 bytes) cost about twice as much. Nothing outside either range is read, and
 * nothing at all when len is 0 (a span without a name has a null pointer). */
static inline int same_bytes(const void *known, Py_ssize_t known_len, const void *data,
                             Py_ssize_t len) {
    const uint8_t *a = known, *b = data;
    if (known_len != len) return 0;
    if (len >= 8) {
        for (Py_ssize_t n = 0; n < len - 8; n += 8)
            if (load_word(a + n) != load_word(b + n)) return 0;
        return load_word(a + len - 8) == load_word(b + len - 8);
    }
    uint8_t differ = 0;
    for (Py_ssize_t n = 0; n < len; n++) differ |= a[n] ^ b[n];
    return differ == 0;
}

/* A cheap, unkeyed mix of up to 16 bytes of `p` (its first and last 8) and its length, for the
 * direct-mapped caches in front of the SipHash tables (span names, trace ids): a client can
 * make every lookup miss them, which costs one compare before the table's own lookup, never
 * a longer probe. Most names and random trace ids differ in these bytes. */
static inline uint64_t quick_mix(const uint8_t *p, Py_ssize_t n) {
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        a = little_endian(p, 8);
        b = little_endian(p + n - 8, 8);
    } else {
        for (Py_ssize_t k = 0; k < n; k++) a |= (uint64_t)p[k] << (8 * k);
    }
    return (a ^ (b * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)n) * 0xFF51AFD7ED558CCDULL;
}

/* The recent slot of these bytes, of 1 << RECENT_SLOT_BITS. */
static inline uint64_t recent_index(const uint8_t *data, Py_ssize_t len) {
    return quick_mix(data, len) >> (64 - RECENT_SLOT_BITS);
}

/* Span names seen in this call: raw bytes (in the request) -> the shared str (owned). Most
 * spans of a request repeat a few names: this spares decoding each one and its dict lookup. */
#define NAME_TABLE_SIZE 256
#define NAME_TABLE_FILL 128
/* The slot of `data` (hashed `hash`) in `table` of `size` slots (a power of two): the one
 * holding its str, or the free one where it belongs. */
static inline TextSlot *text_slot(TextSlot *table, uint64_t size, const uint8_t *data,
                                  Py_ssize_t len, uint64_t hash) {
    for (uint64_t i = hash;; i++) {
        TextSlot *slot = &table[i & (size - 1)];
        if (slot->text == NULL || (slot->hash == hash && same_bytes(slot->data, slot->len, data, len)))
            return slot;
    }
}

/* The slot of `data` in a text table of `size` slots, its recent slot (`*recent`) first: the
 * recent one when it holds these bytes, else text_slot's (then *hash is set), which becomes the
 * recent one when filled. The caller fills a free slot, and then makes it the recent one.
 * Always inlined: as a call (gcc's choice at -O2, for its two callers) it cost ~60
 * instructions a span (callgrind, bench/pipeline_cpu.py). */
static inline __attribute__((always_inline)) TextSlot *
recent_text_slot(TextSlot **recent, TextSlot *table, uint64_t size, const uint8_t *data,
                 Py_ssize_t len, uint64_t *hash) {
    TextSlot *slot = *recent;
    if (slot != NULL && same_bytes(slot->data, slot->len, data, len)) return slot;
    *hash = bytes_hash(data, len);
    slot = text_slot(table, size, data, len, *hash);
    if (slot->text != NULL) *recent = slot;
    return slot;
}

/* Release a table's strings (at the end of a call). */
static inline void text_table_clear(TextSlot *table, int size) {
    for (int n = 0; n < size; n++) Py_CLEAR(table[n].text);
}

typedef struct {
    PyObject *names;     /* span name -> the one str object kept for it */
    PyObject *trace_ids; /* trace id bytes -> its hex str, for this call */
    PyObject *rule;      /* agent candidates: (attribute, value, name prefix, keys), or NULL */
    /* The previous parent span id and its hex str (owned): siblings come together on the
     * wire, so most spans share their parent's str instead of making one each. */
    uint8_t parent[8];
    PyObject *parent_hex;
    int names_used;
    TextSlot name_table[NAME_TABLE_SIZE];
    /* The name table's slots by quick_mix of the name (recent_index), or NULL:
     * looked at before the name is hashed. */
    TextSlot *name_recent[1 << RECENT_SLOT_BITS];
} Shared;

/* SpanRecord's fields, in the order records are filled (_records.c). */
enum {
    R_TRACE_ID, R_SPAN_ID, R_PARENT, R_NAME, R_START, R_END, R_KIND, R_STATUS_CODE,
    R_STATUS_MESSAGE, R_ATTRIBUTES, R_EVENTS, R_RESOURCE, R_SCOPE, R_FIELDS
};
/* Where each field's slot lives in a SpanRecord: set once by bind (_records.c). */
extern Py_ssize_t tracescore_record_offsets[R_FIELDS];

/* The slot at `offset` of a slotted instance, as an lvalue (a borrowed reference when read). */
#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* The fields of a record, as tracescore_record_of filled them (borrowed). */
static inline PyObject *field_of(PyObject *record, int n) {
    return SLOT(record, tracescore_record_offsets[n]);
}

/* Spans grouped by trace while they are scanned (scan_grouped; _grouping.c). */
typedef struct Grouping Grouping;

/* _span.c */
int tracescore_parse_span(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Parsed *s);
/* _attributes.c: one KeyValue added to s's attributes when its key is kept (0, -1 on error);
 * a key of the caller's dict entered in the call's key table; the value table released. */
int tracescore_key_value(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Parsed *s);
void tracescore_table_add(Ctx *ctx, PyObject *key, PyObject *kept);
void tracescore_values_clear(Ctx *ctx);
/* Release what the call's key table holds (at the end of a call). */
void tracescore_table_clear(Ctx *ctx);
/* _records.c */
PyObject *tracescore_bind(PyObject *self, PyObject *args);
/* Release what a call's Shared holds (name table, parent cache). */
void tracescore_shared_clear(Shared *sh);
int tracescore_records_bound(void);
PyObject *tracescore_span_record(Ctx *ctx, Shared *sh, const uint8_t *data, Py_ssize_t len,
                                 Py_ssize_t i, Py_ssize_t j, Py_ssize_t k, PyObject *resource,
                                 PyObject *scope);
/* The hex str of `len` bytes, the SpanRecord of a parsed span (new references, or NULL; the
 * record takes s's attributes and events and the trace_hex reference, also on failure), and
 * whether that span is an agent candidate by the rule (1, 0, or -1 with an exception set). */
PyObject *tracescore_hex_of(const uint8_t *data, Py_ssize_t len);
void tracescore_hex_init(void); /* once, at import */
PyObject *tracescore_record_of(Shared *sh, Parsed *s, PyObject *trace_hex, PyObject *resource,
                               PyObject *scope);
int tracescore_is_scanned_candidate(PyObject *rule, const Parsed *s, PyObject *attrs,
                                    PyObject *name);
/* _grouping.c */
Grouping *tracescore_grouping_new(void);
int tracescore_group_span(Ctx *ctx, Shared *sh, Grouping *g, const uint8_t *data, Py_ssize_t len,
                          Py_ssize_t i, Py_ssize_t j, Py_ssize_t k, PyObject *resource,
                          PyObject *scope);
PyObject *tracescore_grouping_result(Grouping *g);
void tracescore_grouping_free(Grouping *g);
/* _cut.c */
PyObject *tracescore_cut_spans(PyObject *self, PyObject *args);
/* _span_keys.c */
PyObject *tracescore_span_has_key(PyObject *self, PyObject *args);
/* _validate.c */
PyObject *tracescore_validate_request(PyObject *self, PyObject *body);
/* The checks of a checking scan (Ctx.checking): 1 when validate_request accepts [p, end) as
 * what it says, there, else 0 (it may refuse, or the question is left to it). `depth`: the
 * nesting validate_request has left inside that message (100 less the messages around it,
 * the message itself included). */
enum { CHECK_RESOURCE, CHECK_SCOPE, CHECK_KEY_VALUE, CHECK_EVENT, CHECK_LINK, CHECK_STATUS };
int tracescore_check_message(int kind, const uint8_t *p, const uint8_t *end, int depth);
/* A string field's bytes: UTF-8, as upb checks them. */
int tracescore_check_text(const uint8_t *p, const uint8_t *end);
/* An AnyValue payload of a KeyValue (depth: as for the KeyValue's contents). */
int tracescore_check_any_value(const uint8_t *p, const uint8_t *end, int depth);
/* Nesting left inside each message a checking scan reads (see tracescore_check_message). */
#define DEPTH_IN_RESOURCE_SPANS 99
#define DEPTH_IN_SCOPE_SPANS 98
#define DEPTH_IN_SPAN 97

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Whether [p, end) is all ASCII, the common case, read a word at a time. A string lies inside
 * the body [low, high): a short one is read as the word around it that stays inside. */
static inline int tracescore_ascii_only(const uint8_t *p, const uint8_t *end,
                                        const uint8_t *low, const uint8_t *high) {
    const uint64_t top_bits = 0x8080808080808080ULL;
    Py_ssize_t n = end - p;
    uint64_t word, seen = 0;
    if (n >= 8) {
#ifdef __SSE2__
        if (n > 32) { /* 32 bytes a step: tool arguments, results and messages are long */
            __m128i any = _mm_setzero_si128();
            for (; end - p > 32; p += 32)
                any = _mm_or_si128(any, _mm_or_si128(_mm_loadu_si128((const __m128i *)p),
                                                     _mm_loadu_si128((const __m128i *)(p + 16))));
            if (_mm_movemask_epi8(any)) return 0;
        }
#endif
        for (; end - p > 8; p += 8) {
            memcpy(&word, p, 8);
            seen |= word;
        }
        memcpy(&word, end - 8, 8); /* the last 8 bytes, overlapping the loop's */
        return ((seen | word) & top_bits) == 0;
    }
    if (n == 0) return 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (high - p >= 8) { /* the string's bytes are the word's low ones */
        memcpy(&word, p, 8);
        return ((word << (8 * (8 - n))) & top_bits) == 0;
    }
    if (end - low >= 8) { /* its high ones */
        memcpy(&word, end - 8, 8);
        return ((word >> (8 * (8 - n))) & top_bits) == 0;
    }
#endif
    for (; p < end; p++) seen |= *p;
    return (seen & 0x80) == 0;
}

/* Whether [p, end), an AnyValue payload, is one upb accepts in the usual encodings: empty, an
 * ASCII string_value, a bool_value or int_value varint, or a double_value, alone ([low, high):
 * the bytes around it that may be read, see tracescore_ascii_only). The validator's, and a
 * checking scan's, inline. */
static inline int tracescore_plain_any_value(const uint8_t *p, const uint8_t *end,
                                             const uint8_t *low, const uint8_t *high) {
    if (p == end) return 1;
    uint8_t tag = *p++;
    uint64_t value;
    const uint8_t *at = p;
    switch (tag) {
    case 0x0A: /* string_value */
        return read_varint(&p, end, &value) == 0 && p - at <= 5 &&
               value == (uint64_t)(end - p) && tracescore_ascii_only(p, end, low, high);
    case 0x10: /* bool_value */
    case 0x18: /* int_value */
        return read_varint(&p, end, &value) == 0 && p == end;
    case 0x21: /* double_value */
        return end - p == 8;
    default:
        return 0;
    }
}

/* Whether a field read by next_field from `start` has a tag and length of at most 5 bytes, a
 * tag of 32 bits and is no group: what validate_request takes of any field (a checking scan
 * leaves anything else to it). */
static inline int plain_field(const uint8_t *start, const Field *f) {
    int n = 0;
    while (start[n] >= 0x80) n++; /* next_field read this tag: it ends within 10 bytes */
    if (n > 4 || (n == 4 && start[4] > 0x0F) || f->wire == 3) return 0;
    return f->wire != 2 || f->data - (start + n + 1) <= 5;
}

#endif
