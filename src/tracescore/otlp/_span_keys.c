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

/* Whether `key` (len bytes) is the UTF-8 of one of `keys`, all str with UTF-8 (checked). */
static int one_of(PyObject *keys, const uint8_t *key, Py_ssize_t len) {
    Py_ssize_t pos = 0, size;
    PyObject *item;
    for (Py_ssize_t n = 0; (item = key_at(keys, &pos, n)) != NULL; n++) {
        const char *text = PyUnicode_AsUTF8AndSize(item, &size); /* cached: see below */
        if (size == len && (len == 0 || memcmp(text, key, (size_t)len) == 0)) return 1;
    }
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
    Py_ssize_t pos = 0, size;
    PyObject *item;
    for (Py_ssize_t n = 0; (item = key_at(keys, &pos, n)) != NULL; n++) {
        if (!PyUnicode_Check(item) || PyUnicode_AsUTF8AndSize(item, &size) == NULL) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(span);
    const uint8_t *end = p + PyBytes_GET_SIZE(span);
    Field f, g;
    while (p < end) {
        if (tag_too_long(p, end) || next_field(&p, end, &f)) Py_RETURN_NONE;
        if (f.number != 9) continue;
        if (f.wire != 2) Py_RETURN_NONE;
        const uint8_t *q = f.data, *q_end = f.data + f.len, *key = NULL;
        Py_ssize_t key_len = 0; /* no key field: the empty key */
        int keys_read = 0;
        while (q < q_end) {
            if (tag_too_long(q, q_end) || next_field(&q, q_end, &g)) Py_RETURN_NONE;
            if (g.number != 1) continue;
            if (g.wire != 2 || keys_read++) Py_RETURN_NONE;
            key = g.data;
            key_len = g.len;
        }
        if (one_of(keys, key, key_len)) Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}
