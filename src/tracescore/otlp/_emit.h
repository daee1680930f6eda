/* What the encoders of a scored run's telemetry share (_emit_logs.c: its
 * gen_ai.evaluation.result log records; _emit_attributes.c: the score attributes of its agent
 * span): protobuf writing and reading a Score's fields.
 *
 * Both were already pieces memoized in Python and one bytes join per item; what was left was
 * the Python of reading each score and joining its pieces (3.3 and 3.2 us per run of three
 * scores; 1.1 and 1.9 here, the latter with its Python caller), about 5% of the service's
 * instructions per span. Here a run's scores are read and their bytes written in one call. Every
 * piece that depends on the config or on traffic (record templates, label fields, the pieces
 * of a score name) is still made, and remembered, by the Python modules, called back on a
 * miss; the bytes are exactly those of the Python twins (`python_*` there; tests compare). */
#ifndef TRACESCORE_EMIT_H
#define TRACESCORE_EMIT_H
#include "_scan.h"

/* The Score fields read, interned once by tracescore_score_names (0, or -1 on error). */
enum { S_NAME, S_VALUE, S_LABEL, S_ERROR, S_EXPLANATION, S_DIGEST, S_FIELDS };
extern PyObject *tracescore_score_fields[S_FIELDS];
int tracescore_score_names(void);

static inline Py_ssize_t varint_size(uint64_t v) {
    Py_ssize_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *put_bytes(uint8_t *p, PyObject *bytes) {
    Py_ssize_t n = PyBytes_GET_SIZE(bytes);
    memcpy(p, PyBytes_AS_STRING(bytes), (size_t)n);
    return p + n;
}

static inline uint8_t *put_double(uint8_t *p, double value) {
    /* protobuf's fixed64 double: little-endian IEEE 754 (the platforms built on are). */
    uint64_t bits;
    memcpy(&bits, &value, 8);
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(bits >> (8 * i));
    return p;
}

/* A string attribute: `tag` <len> KeyValue{key_field, value: AnyValue{string_value}}. */
static inline Py_ssize_t string_attribute_size(Py_ssize_t key_field, Py_ssize_t size) {
    Py_ssize_t any = 1 + varint_size((uint64_t)size) + size;
    Py_ssize_t kv = key_field + 1 + varint_size((uint64_t)any) + any;
    return 1 + varint_size((uint64_t)kv) + kv;
}

static inline uint8_t *put_string_attribute(uint8_t *p, uint8_t tag, PyObject *key_field,
                                            const char *data, Py_ssize_t size) {
    Py_ssize_t any = 1 + varint_size((uint64_t)size) + size;
    Py_ssize_t kv = PyBytes_GET_SIZE(key_field) + 1 + varint_size((uint64_t)any) + any;
    *p++ = tag;
    p = put_varint(p, (uint64_t)kv);
    p = put_bytes(p, key_field);
    *p++ = 0x12; /* KeyValue.value */
    p = put_varint(p, (uint64_t)any);
    *p++ = 0x0a; /* AnyValue.string_value */
    p = put_varint(p, (uint64_t)size);
    memcpy(p, data, (size_t)size);
    return p + size;
}

static inline int is_bytes(PyObject *o, const char *what) {
    if (PyBytes_CheckExact(o))
        return 1;
    PyErr_Format(PyExc_TypeError, "%s must be bytes, not %.80s", what, Py_TYPE(o)->tp_name);
    return 0;
}

/* The value of a score as a double; 0 when it has none, -1 on error. */
static inline int value_of(PyObject *score, double *out, PyObject **value) {
    *value = PyObject_GetAttr(score, tracescore_score_fields[S_VALUE]);
    if (*value == NULL)
        return -1;
    if (*value == Py_None)
        return 0;
    *out = PyFloat_AsDouble(*value);
    if (*out == -1.0 && PyErr_Occurred())
        return -1;
    return 1;
}

/* The explanation of a score as UTF-8 (borrowed from the str, kept alive by `*text`). */
static inline const char *explanation_of(PyObject *score, PyObject **text, Py_ssize_t *size) {
    *text = PyObject_GetAttr(score, tracescore_score_fields[S_EXPLANATION]);
    if (*text == NULL)
        return NULL;
    if (!PyUnicode_Check(*text)) {
        PyErr_Format(PyExc_TypeError, "a score's explanation must be a str, not %.80s",
                     Py_TYPE(*text)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(*text, size);
}

/* memo[key], or make(key) on a miss, which remembers what it makes in Python: a new
 * reference, NULL on error. */
static inline PyObject *remembered(PyObject *memo, PyObject *key, PyObject *make) {
    PyObject *found = PyDict_GetItemWithError(memo, key);
    if (found != NULL)
        return Py_NewRef(found);
    return PyErr_Occurred() ? NULL : PyObject_CallOneArg(make, key);
}

#endif
