/* The attributes of a span as the scan reads them (tracescore.otlp._scan, see _scan.c): which
 * raw keys are kept (a per-call table over the caller's key dict), KeyValues and AnyValues
 * decoded, and string values shared within a call (a per-call value table). */
#include "_scan.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static Slot *table_find(Ctx *ctx, const uint8_t *data, Py_ssize_t len, uint64_t hash) {
    for (uint64_t i = hash;; i++) {
        Slot *slot = &ctx->table[i & (TABLE_SIZE - 1)];
        if (slot->data == NULL ||
            (slot->hash == hash && same_bytes(slot->data, slot->len, data, len)))
            return slot;
    }
}

/* RULE_* bits of a kept key (a str, or None when not kept). */
static int rule_bits(Ctx *ctx, PyObject *kept) {
    if (ctx->rule == NULL || kept == Py_None) return 0;
    PyObject *attribute = PyTuple_GET_ITEM(ctx->rule, 0), *keys = PyTuple_GET_ITEM(ctx->rule, 3);
    /* Exact str compare as dict keys do; anything else is left to the dict to decide. */
    if (!PyUnicode_CheckExact(kept) || !PyUnicode_CheckExact(attribute)) return RULE_UNSURE;
    int bits = PyUnicode_Compare(kept, attribute) == 0 ? RULE_ATTRIBUTE : 0;
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(keys); n++) {
        PyObject *key = PyTuple_GET_ITEM(keys, n);
        if (!PyUnicode_CheckExact(key)) return RULE_UNSURE;
        if (PyUnicode_Compare(kept, key) == 0) bits |= RULE_KEY;
    }
    return bits;
}

/* What the caller's classify answered for a key: its str, or None; *needles the texts a kept
 * string value must hold ((key, needles) answers), else NULL. Borrowed; NULL with TypeError
 * set for anything else. */
static PyObject *split_kept(PyObject *kept, PyObject **needles) {
    *needles = NULL;
    if (kept == Py_None || PyUnicode_Check(kept)) return kept;
    if (PyTuple_CheckExact(kept) && PyTuple_GET_SIZE(kept) == 2 &&
        PyUnicode_Check(PyTuple_GET_ITEM(kept, 0)) && PyTuple_CheckExact(PyTuple_GET_ITEM(kept, 1))) {
        PyObject *texts = PyTuple_GET_ITEM(kept, 1);
        for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(texts); n++)
            if (!PyBytes_CheckExact(PyTuple_GET_ITEM(texts, n))) goto odd;
        *needles = texts;
        return PyTuple_GET_ITEM(kept, 0);
    }
odd:
    PyErr_SetString(PyExc_TypeError, "classify must answer a str, None or (str, bytes tuple)");
    return NULL;
}

/* Remember a key the dict holds (key: a bytes object the dict holds; the table holds it and
 * kept too, until tracescore_table_clear). */
void tracescore_table_add(Ctx *ctx, PyObject *key, PyObject *kept) {
    if (ctx->used >= TABLE_FILL || !PyBytes_Check(key)) return;
    PyObject *needles, *text = split_kept(kept, &needles);
    if (text == NULL) { /* looked up through the dict instead, which says what is wrong */
        PyErr_Clear();
        return;
    }
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(key);
    Py_ssize_t len = PyBytes_GET_SIZE(key);
    uint64_t hash = bytes_hash(data, len);
    Slot *slot = table_find(ctx, data, len, hash);
    if (slot->data != NULL) return;
    slot->data = (const char *)data;
    slot->len = len;
    slot->hash = hash;
    slot->kept = text;
    slot->needles = needles;
    slot->rule = rule_bits(ctx, text);
    slot->text_ok = tracescore_check_text(data, data + len);
    slot->key = Py_NewRef(key);
    slot->answer = Py_NewRef(kept);
    ctx->used++;
}

void tracescore_table_clear(Ctx *ctx) {
    for (int n = 0; n < TABLE_SIZE && ctx->used > 0; n++) {
        Slot *slot = &ctx->table[n];
        if (slot->data == NULL) continue;
        Py_CLEAR(slot->key);
        Py_CLEAR(slot->answer);
        *slot = (Slot){.data = NULL}; /* empty for the next call (_scan.c keeps the table) */
        ctx->used--;
    }
}

/* Whether one of the needles starts at data[at]. */
static int needle_at(PyObject *needles, const uint8_t *data, Py_ssize_t len, Py_ssize_t at) {
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(needles); n++) {
        PyObject *needle = PyTuple_GET_ITEM(needles, n);
        const char *text = PyBytes_AS_STRING(needle);
        Py_ssize_t size = PyBytes_GET_SIZE(needle);
        if (data[at] == (uint8_t)text[0] && at + size <= len &&
            memcmp(data + at, text, (size_t)size) == 0)
            return 1;
    }
    return 0;
}

#define NEEDLES_MAX 4
#define LOW_BITS 0x0101010101010101ULL
#define HIGH_BITS 0x8080808080808080ULL

/* Whether a kept key's string value must be left out: it has texts to hold (`needles`), none
 * of them occurs in its bytes, and the bytes are ASCII (so the text is what they spell; other
 * values are decoded as usual, and kept). Read 16 bytes at a time where SSE2 is (every
 * x86-64), else 8: byte by byte, and with memmem, the test cost more than leaving a 300-byte
 * tool result out saved. A block with a needle's first byte is looked at byte by byte. */
static int left_out(PyObject *needles, const uint8_t *data, Py_ssize_t len) {
    Py_ssize_t count = PyTuple_GET_SIZE(needles), at = 0;
    uint8_t firsts[NEEDLES_MAX];
    if (count > NEEDLES_MAX) return 0; /* more than the classify of `serve` gives: kept */
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *needle = PyTuple_GET_ITEM(needles, n);
        if (PyBytes_GET_SIZE(needle) == 0) return 0; /* an empty text occurs everywhere */
        firsts[n] = (uint8_t)PyBytes_AS_STRING(needle)[0];
    }
#ifdef __SSE2__
    __m128i wanted[NEEDLES_MAX];
    for (Py_ssize_t n = 0; n < count; n++) wanted[n] = _mm_set1_epi8((char)firsts[n]);
    for (; at + 16 <= len; at += 16) {
        __m128i block = _mm_loadu_si128((const __m128i *)(data + at));
        if (_mm_movemask_epi8(block)) return 0; /* a byte of 0x80 or more: not ASCII */
        int hits = 0;
        for (Py_ssize_t n = 0; n < count; n++)
            hits |= _mm_movemask_epi8(_mm_cmpeq_epi8(block, wanted[n]));
        for (; hits; hits &= hits - 1)
            if (needle_at(needles, data, len, at + __builtin_ctz((unsigned)hits))) return 0;
    }
#endif
    for (; at + 8 <= len; at += 8) {
        uint64_t word;
        memcpy(&word, data + at, 8);
        if (word & HIGH_BITS) return 0;
        for (Py_ssize_t n = 0; n < count; n++) {
            uint64_t x = word ^ (LOW_BITS * firsts[n]); /* a zero byte where firsts[n] is */
            if (((x - LOW_BITS) & ~x & HIGH_BITS) == 0) continue;
            for (Py_ssize_t k = at; k < at + 8; k++)
                if (data[k] == firsts[n] && needle_at(needles, data, len, k)) return 0;
        }
    }
    for (; at < len; at++)
        if (data[at] >= 0x80 || needle_at(needles, data, len, at)) return 0;
    return 1;
}

/* The str of a string value's bytes; `ascii`: 1 when a checking scan's test found them ASCII,
 * else -1 (asked here). ASCII bytes are copied into a str made for them: PyUnicode_DecodeUTF8
 * tested and copied them a word at a time, about three times the instructions for tool
 * arguments and results of a few hundred bytes. A string of one character goes through the
 * decoder, which shares those. NULL with an exception set when the bytes are not UTF-8. */
static PyObject *decoded_text(const uint8_t *data, Py_ssize_t len, int ascii) {
    if (len > 1 && (ascii > 0 || tracescore_ascii_only(data, data + len, data, data + len))) {
        PyObject *text = PyUnicode_New(len, 127);
        if (text != NULL) memcpy(PyUnicode_1BYTE_DATA(text), data, (size_t)len);
        return text;
    }
    return PyUnicode_DecodeUTF8((const char *)data, len, NULL);
}

/* A string value of a kept key (key: its slot, or NULL) decoded, or shared from the value
 * table (new reference), or NULL with an exception set when it is not UTF-8. ascii: as for
 * decoded_text. The key's last value, then the recent slot of these bytes (Ctx.value_recent),
 * are compared before the bytes are hashed. */
static PyObject *string_value(Ctx *ctx, Slot *key, const uint8_t *data, Py_ssize_t len,
                              int ascii) {
    if (key == NULL || len > VALUE_CACHE_MAX ||
        (key->value_misses >= VALUE_MISSES_TRIED && 2 * key->value_hits < key->value_misses))
        return decoded_text(data, len, ascii);
    TextSlot *slot = key->last_value;
    if (slot == NULL || !same_bytes(slot->data, slot->len, data, len)) {
        TextSlot **recent = &ctx->value_recent[recent_index(data, len)];
        uint64_t hash = 0;
        slot = recent_text_slot(recent, ctx->values, VALUE_TABLE_SIZE, data, len, &hash);
        if (slot->text == NULL) {
            key->value_misses++;
            PyObject *text = decoded_text(data, len, ascii);
            if (text != NULL && ctx->values_used < VALUE_TABLE_FILL) {
                *slot = (TextSlot){.data = data, .len = len, .hash = hash,
                                   .text = Py_NewRef(text)};
                ctx->values_used++;
                key->last_value = *recent = slot;
            }
            return text;
        }
        key->last_value = slot;
    }
    key->value_hits++;
    return Py_NewRef(slot->text);
}

/* Release the value table's strings (at the end of a call). */
void tracescore_values_clear(Ctx *ctx) {
    text_table_clear(ctx->values, VALUE_TABLE_SIZE);
    ctx->values_used = 0;
}

/* Decode one AnyValue payload of a kept key (key: its slot, or NULL); *size grows by the
 * bytes the value holds. ascii: 1 when a checking scan found it an ASCII string value, else
 * -1. New reference. */
static PyObject *any_value(Ctx *ctx, Slot *key, const uint8_t *data, Py_ssize_t len,
                           Py_ssize_t *size, int ascii) {
    if (len == 0) Py_RETURN_NONE;
    const uint8_t *p = data, *end = data + len;
    Field f;
    uint64_t n;
    if (*data == 0x0A && read_varint(&p, end, &n) == 0 && read_varint(&p, end, &n) == 0 &&
        n == (uint64_t)(end - p)) {
        /* The usual string value, one field filling the AnyValue: no general field read. */
        f = (Field){.number = 1, .wire = 2, .data = p, .len = (Py_ssize_t)n};
        p = end;
    } else {
        p = data;
        if (next_field(&p, end, &f)) p = data; /* malformed: left to upb below */
    }
    if (p == end) {
        if (f.number == 1 && f.wire == 2) {
            PyObject *text = string_value(ctx, key, f.data, f.len, ascii);
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

/* What classify answered for raw key bytes (new reference; see split_kept), NULL on error;
 * *found: its slot in the table, or NULL when it is past the table's fill. A slot's answer
 * is its key's str, which the dict's answer holds. The key that followed the span's previous
 * one last time (Slot.next) is compared first, then the recent slot of these bytes
 * (Ctx.key_recent); a wrong guess costs that compare. */
static PyObject *kept_key(Ctx *ctx, Parsed *s, const uint8_t *data, Py_ssize_t len,
                          Slot **found) {
    Slot *slot = s->last_key != NULL ? s->last_key->next : ctx->first;
    if (slot == NULL || !same_bytes(slot->data, slot->len, data, len)) {
        Slot **recent = &ctx->key_recent[recent_index(data, len)];
        slot = *recent;
        if (slot == NULL || !same_bytes(slot->data, slot->len, data, len)) {
            slot = table_find(ctx, data, len, bytes_hash(data, len));
            if (slot->data != NULL) *recent = slot; /* filled slots only (Ctx.key_recent) */
        }
    }
    PyObject *kept = NULL;
    if (slot->data != NULL) {
        kept = Py_NewRef(slot->kept);
    } else {
        PyObject *raw = PyBytes_FromStringAndSize((const char *)data, len);
        if (raw == NULL) return NULL;
        kept = PyDict_GetItemWithError(ctx->keys, raw);
        if (kept != NULL) {
            Py_INCREF(kept); /* a key past the table's fill: raw is not the dict's own object */
        } else if (!PyErr_Occurred()) {
            kept = PyObject_CallOneArg(ctx->classify, raw);
            if (kept != NULL && len <= KEY_CACHE_MAX &&
                PyDict_GET_SIZE(ctx->keys) < KEY_CACHE_LIMIT) {
                if (PyDict_SetItem(ctx->keys, raw, kept) < 0)
                    Py_CLEAR(kept);
                else
                    tracescore_table_add(ctx, raw, kept); /* the dict now owns raw and kept */
            }
        }
        Py_DECREF(raw);
    }
    /* tracescore_table_add filled the free slot found, or the table was full */
    *found = slot->data != NULL ? slot : NULL;
    if (*found != NULL) {
        if (s->last_key != NULL)
            s->last_key->next = slot;
        else
            ctx->first = slot;
        s->last_key = slot;
    }
    return kept;
}

/* Add one KeyValue to s's attributes when its key is kept. 0 on success, -1 on error. */
int tracescore_key_value(Ctx *ctx, const uint8_t *data, Py_ssize_t len, Parsed *s) {
    PyObject *attrs = s->attrs;
    Py_ssize_t *size = &s->size;
    const uint8_t *p = data, *end = data + len;
    const uint8_t *key = NULL, *value = NULL;
    Py_ssize_t key_len = 0, value_len = 0;
    int values = 0, odd = 0, usual = 0;
    Field f;
    uint64_t n;
    /* The usual encoding, a short key then at most one value, read without the general field
     * reader: 0x0A <key length> <key> [0x12 <value length> <AnyValue filling the rest>]. */
    if (len >= 2 && data[0] == 0x0A && data[1] < 0x80 && data[1] <= len - 2) {
        const uint8_t *q = data + 2 + data[1];
        if (q == end) {
            key = data + 2;
            key_len = data[1];
            p = end;
        } else if (*q++ == 0x12 && read_varint(&q, end, &n) == 0 && n == (uint64_t)(end - q)) {
            key = data + 2;
            key_len = data[1];
            value = q;
            value_len = (Py_ssize_t)n;
            values = 1;
            usual = 1;
            p = end;
        }
    }
    /* A checking scan's question (_scan.h), on what was read above; a key in the usual
     * encoding is asked below, once its table slot (which knows the answer) is found. */
    int check_key = ctx->checking && key != NULL;
    int ascii = -1; /* a string value the check found ASCII: 1 (see decoded_text) */
    if (ctx->checking) {
        int depth = DEPTH_IN_SPAN - 1, plain = 0;
        int ok = key == NULL ? tracescore_check_message(CHECK_KEY_VALUE, data, end, depth)
                 : value == NULL ? 1
                 : value - (key + key_len + 1) <= 5 &&
                       ((plain = tracescore_plain_any_value(value, value + value_len, data,
                                                            end)) ||
                        tracescore_check_any_value(value, value + value_len, depth));
        if (!ok) ctx->unsure = 1;
        /* plain_any_value of a string_value (tag 0x0A) vouches that its bytes are ASCII */
        if (plain && value_len > 0 && *value == 0x0A) ascii = 1;
    }
    while (p < end) {
        if (read_field(&p, end, &f, "attribute")) return -1;
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
        s->rule_unsure = 1;
        int rc = 0;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 3) {
            PyErr_SetString(PyExc_TypeError, "slow_kv must return (key, value, size)");
            rc = -1;
        } else if (PyTuple_GET_ITEM(pair, 0) != Py_None) {
            Py_ssize_t held = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 2));
            if (held == -1 && PyErr_Occurred())
                rc = -1;
            else if ((rc = PyDict_SetItem(attrs, PyTuple_GET_ITEM(pair, 0),
                                          PyTuple_GET_ITEM(pair, 1))) == 0)
                *size += held;
        }
        Py_DECREF(pair);
        return rc;
    }
    Slot *slot;
    PyObject *answer = kept_key(ctx, s, key, key_len, &slot), *needles;
    if (answer == NULL) return -1;
    if (check_key && !(slot != NULL ? slot->text_ok : tracescore_check_text(key, key + key_len)))
        ctx->unsure = 1;
    /* The table holds the answer split (its parts live as long as `answer`); the dict's, past
     * the table's fill, is split here. */
    PyObject *kept = slot != NULL ? slot->kept : split_kept(answer, &needles);
    if (slot != NULL) needles = slot->needles;
    int rule = slot != NULL ? slot->rule : RULE_UNSURE;
    if (kept == NULL || kept == Py_None) {
        Py_DECREF(answer);
        return kept == NULL ? -1 : 0;
    }
    if (needles != NULL && usual && value_len >= 1 && *value == 0x0A) {
        /* A string value in its usual encoding (0x0A <length> <bytes> filling the AnyValue),
         * in a KeyValue in its usual one (the Python twin leaves out the same values). */
        const uint8_t *text = value + 1, *stop = value + value_len;
        if (read_varint(&text, stop, &n) == 0 && n == (uint64_t)(stop - text) &&
            left_out(needles, text, (Py_ssize_t)n)) {
            Py_DECREF(answer);
            return 0;
        }
    }
    PyObject *decoded =
        value == NULL ? Py_NewRef(Py_None) : any_value(ctx, slot, value, value_len, size, ascii);
    int rc = decoded == NULL ? -1 : PyDict_SetItem(attrs, kept, decoded);
    if (rc == 0 && key_len > KEY_CACHE_MAX) *size += key_len; /* a str of its own: counted */
    if (rc == 0) { /* the dict holds decoded until a later value of the key replaces it */
        if (rule & RULE_ATTRIBUTE) s->rule_value = decoded;
        s->rule_key |= (rule & RULE_KEY) != 0;
        s->rule_unsure |= (rule & RULE_UNSURE) != 0;
    }
    Py_XDECREF(decoded);
    Py_DECREF(answer); /* and with it `kept`, which it holds or is */
    return rc;
}
