/* span_has_key(span, keys) -> True, False or None: whether the Span message `span` has an
 * attribute whose key is one of `keys` (a dict's keys or a tuple, str), read off the wire;
 * None where the span is in a shape this does not read (malformed, a field number 0 or a tag
 * over 32 bits, an attributes field not length-delimited, a KeyValue whose key is repeated or
 * not length-delimited, a key that is not a str): the caller's other test decides those.
 *
 * Why: the held agent span is annotated by appending score attributes to its bytes unless it
 * already has one of their keys (export/spans.py). Searching the span's bytes for the keys
 * with bytes.find cost ~8.6k instructions per held span in Python (callgrind, the checks mix
 * of bench/pipeline_cpu.py); this walk, a few hundred. The Python twin is
 * tracescore.otlp.span_keys.python_span_has_key (tests/otlp/test_span_keys.py, the fuzz
 * target compare them). */
#include "_scan.h"

/* The n-th of `keys` (a dict's keys or a tuple's items; *pos: where a dict's walk is), or
 * NULL past the last. Borrowed. */
static PyObject *key_at(PyObject *keys, Py_ssize_t *pos, Py_ssize_t n) {
    PyObject *key, *value;
    if (PyTuple_Check(keys)) return n < PyTuple_GET_SIZE(keys) ? PyTuple_GET_ITEM(keys, n) : NULL;
    return PyDict_Next(keys, pos, &key, &value) ? key : NULL;
}

/* The UTF-8 of the keys, read once per call (asking the dict and the str for each attribute
 * of the span cost ten times the walk). */
#define KEYS_ON_STACK 64
typedef struct {
    const char **text;
    Py_ssize_t *len, n;
    uint64_t lengths; /* bit (length % 64) set for each key: most span keys pass by on it */
} Wanted;

/* Whether [key, key + len) is one of the wanted keys. */
static int one_of(const Wanted *w, const uint8_t *key, Py_ssize_t len) {
    if (!(w->lengths >> (len & 63) & 1)) return 0;
    for (Py_ssize_t m = 0; m < w->n; m++)
        if (w->len[m] == len && (len == 0 || memcmp(w->text[m], key, (size_t)len) == 0))
            return 1;
    return 0;
}

/* Whether the tag at p is over 32 bits (upb refuses it; next_field would cut it short). */
static int tag_too_long(const uint8_t *p, const uint8_t *end) {
    uint64_t tag;
    return read_varint(&p, end, &tag) == 0 && tag > UINT32_MAX;
}

PyObject *tracescore_span_has_key(PyObject *self, PyObject *args) {
    PyObject *span, *keys;
    if (!PyArg_ParseTuple(args, "O!O", &PyBytes_Type, &span, &keys)) return NULL;
    if (!PyDict_Check(keys) && !PyTuple_Check(keys))
        return PyErr_Format(PyExc_TypeError, "span_has_key: keys must be a dict or a tuple");
    /* Every key a str with UTF-8 (made and cached by its str here), or no answer. */
    Py_ssize_t count = PyTuple_Check(keys) ? PyTuple_GET_SIZE(keys) : PyDict_GET_SIZE(keys);
    const char *texts[KEYS_ON_STACK];
    Py_ssize_t lens[KEYS_ON_STACK];
    int on_stack = count <= KEYS_ON_STACK;
    Wanted w = {on_stack ? texts : PyMem_Malloc(sizeof(char *) * (size_t)count),
                on_stack ? lens : PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)count), 0, 0};
    PyObject *item, *answer = Py_False;
    Py_ssize_t pos = 0;
    if (w.text == NULL || w.len == NULL) {
        if (!on_stack) {
            PyMem_Free(w.text);
            PyMem_Free(w.len);
        }
        return PyErr_NoMemory();
    }
    for (; w.n < count && (item = key_at(keys, &pos, w.n)) != NULL; w.n++) {
        w.text[w.n] = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &w.len[w.n]) : NULL;
        if (w.text[w.n] == NULL) {
            PyErr_Clear();
            answer = Py_None;
            break;
        }
        w.lengths |= (uint64_t)1 << (w.len[w.n] & 63);
    }
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(span);
    const uint8_t *end = p + PyBytes_GET_SIZE(span);
    Field f, g;
    while (answer == Py_False && p < end) {
        if (tag_too_long(p, end) || next_field(&p, end, &f)) {
            answer = Py_None;
            break;
        }
        if (f.number != 9) continue;
        if (f.wire != 2) {
            answer = Py_None;
            break;
        }
        const uint8_t *q = f.data, *q_end = f.data + f.len, *key = NULL;
        Py_ssize_t key_len = 0; /* no key field: the empty key */
        int keys_read = 0;
        uint64_t n;
        if (f.len >= 2 && q[0] == 0x0A && q[1] < 0x80 && q[1] <= f.len - 2) {
            /* The usual encoding, read as the scan reads it: a short key, then nothing or
             * one value filling the rest (0x12 <length> <AnyValue>). */
            const uint8_t *v = q + 2 + q[1];
            if (v == q_end || (*v++ == 0x12 && read_varint(&v, q_end, &n) == 0 &&
                               n == (uint64_t)(q_end - v))) {
                key = q + 2;
                key_len = q[1];
                q = q_end;
            }
        }
        while (answer == Py_False && q < q_end) {
            if (tag_too_long(q, q_end) || next_field(&q, q_end, &g)) answer = Py_None;
            else if (g.number == 1 && (g.wire != 2 || keys_read++)) answer = Py_None;
            else if (g.number == 1) {
                key = g.data;
                key_len = g.len;
            }
        }
        if (answer == Py_False && one_of(&w, key, key_len)) answer = Py_True;
    }
    if (!on_stack) {
        PyMem_Free(w.text);
        PyMem_Free(w.len);
    }
    return Py_NewRef(answer);
}
