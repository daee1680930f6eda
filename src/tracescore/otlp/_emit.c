/* Encoding what a scored run emits: its gen_ai.evaluation.result log records
 * (export/events.py) and the score attributes of its agent span (export/encoded_attributes.py).
 *
 * Both were already pieces memoized in Python and one bytes join per item; what was left was
 * the Python of reading each score and joining its pieces, about a tenth of what the service
 * spends per span. Here a run's scores are read and their bytes written in one call. Every
 * piece that depends on the config or on traffic (record templates, label fields, the pieces
 * of a score name) is still made, and remembered, by the Python modules, called back on a
 * miss; the bytes are exactly those of the Python twins (`python_*` there; tests compare). */
#include "_scan.h"

/* The Score fields read here, interned once. */
static PyObject *s_name, *s_value, *s_label, *s_error, *s_explanation, *s_digest;

static int intern_names(void) {
    if (s_name != NULL)
        return 0;
    s_name = PyUnicode_InternFromString("name");
    s_value = PyUnicode_InternFromString("value");
    s_label = PyUnicode_InternFromString("label");
    s_error = PyUnicode_InternFromString("error");
    s_explanation = PyUnicode_InternFromString("explanation");
    s_digest = PyUnicode_InternFromString("digest");
    if (!s_name || !s_value || !s_label || !s_error || !s_explanation || !s_digest) {
        Py_CLEAR(s_name);
        return -1;
    }
    return 0;
}

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

static int is_bytes(PyObject *o, const char *what) {
    if (PyBytes_CheckExact(o))
        return 1;
    PyErr_Format(PyExc_TypeError, "%s must be bytes, not %.80s", what, Py_TYPE(o)->tp_name);
    return 0;
}

/* The value of a score as a double; 0 when it has none, -1 on error. */
static int value_of(PyObject *score, double *out, PyObject **value) {
    *value = PyObject_GetAttr(score, s_value);
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
static const char *explanation_of(PyObject *score, PyObject **text, Py_ssize_t *size) {
    *text = PyObject_GetAttr(score, s_explanation);
    if (*text == NULL)
        return NULL;
    if (!PyUnicode_Check(*text)) {
        PyErr_Format(PyExc_TypeError, "a score's explanation must be a str, not %.80s",
                     Py_TYPE(*text)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(*text, size);
}

/* ---- gen_ai.evaluation.result log records ------------------------------------------------ */

typedef struct {
    PyObject *template; /* (head, middle, tail), owned */
    PyObject *text;     /* the explanation, owned */
    const char *explanation;
    Py_ssize_t size;
    int has_value;
    double value;
    Py_ssize_t record; /* the record's bytes, without its own frame */
} Record;

static void records_free(Record *records, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_XDECREF(records[i].template);
        Py_XDECREF(records[i].text);
    }
    PyMem_Free(records);
}

/* The memo key of a score's record template: (name, label, error type, agent, scenario,
 * digest), as events._record makes it. */
static PyObject *template_key(PyObject *score, PyObject *agent, PyObject *scenario,
                              PyObject *label_of, PyObject *error_type_of, PyObject *label_error) {
    PyObject *error = PyObject_GetAttr(score, s_error);
    if (error == NULL)
        return NULL;
    PyObject *label, *kind;
    if (error == Py_None) {
        label = PyObject_GetAttr(score, s_label);
        if (label == Py_None) {
            Py_DECREF(label);
            label = PyObject_CallOneArg(label_of, score);
        }
        kind = Py_NewRef(Py_None);
    } else {
        label = Py_NewRef(label_error);
        kind = PyObject_CallOneArg(error_type_of, score);
    }
    Py_DECREF(error);
    PyObject *name = PyObject_GetAttr(score, s_name);
    PyObject *digest = PyObject_GetAttr(score, s_digest);
    PyObject *key = NULL;
    if (label && kind && name && digest)
        key = PyTuple_Pack(6, name, label, kind, agent, scenario, digest);
    Py_XDECREF(label);
    Py_XDECREF(kind);
    Py_XDECREF(name);
    Py_XDECREF(digest);
    return key;
}

static PyObject *template_of(PyObject *key, PyObject *templates, PyObject *make) {
    PyObject *template = PyDict_GetItemWithError(templates, key);
    if (template != NULL)
        return Py_NewRef(template);
    if (PyErr_Occurred())
        return NULL;
    template = PyObject_CallOneArg(make, key); /* makes and remembers it */
    if (template == NULL)
        return NULL;
    if (!PyTuple_CheckExact(template) || PyTuple_GET_SIZE(template) != 3 ||
        !is_bytes(PyTuple_GET_ITEM(template, 0), "a template's head") ||
        !is_bytes(PyTuple_GET_ITEM(template, 1), "a template's middle") ||
        !is_bytes(PyTuple_GET_ITEM(template, 2), "a template's tail")) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a record template must be 3 bytes");
        Py_DECREF(template);
        return NULL;
    }
    return template;
}

/* encode_log_records(consts, scores, agent, scenario, start, end) -> bytes: the framed
 * LogRecords of one run's scores (events.python_encode_records is the twin). consts:
 * (templates, make_template, label_of, error_type_of, label_error, value_head,
 * explanation_key_field). */
PyObject *tracescore_encode_log_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "encode_log_records takes 6 arguments");
        return NULL;
    }
    PyObject *consts = args[0], *scores = args[1], *agent = args[2], *scenario = args[3];
    PyObject *start = args[4], *end = args[5];
    if (!PyTuple_CheckExact(scores) || !PyTuple_CheckExact(consts) ||
        PyTuple_GET_SIZE(consts) != 7) {
        PyErr_SetString(PyExc_TypeError, "encode_log_records: scores and consts are tuples");
        return NULL;
    }
    PyObject *templates = PyTuple_GET_ITEM(consts, 0), *make = PyTuple_GET_ITEM(consts, 1);
    PyObject *label_of = PyTuple_GET_ITEM(consts, 2), *error_type_of = PyTuple_GET_ITEM(consts, 3);
    PyObject *label_error = PyTuple_GET_ITEM(consts, 4), *value_head = PyTuple_GET_ITEM(consts, 5);
    PyObject *key_field = PyTuple_GET_ITEM(consts, 6);
    if (!PyDict_Check(templates) || !is_bytes(start, "start") || !is_bytes(end, "end") ||
        !is_bytes(value_head, "value_head") || !is_bytes(key_field, "explanation_key_field") ||
        intern_names() < 0)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(scores), total = 0;
    Record *records = PyMem_Calloc((size_t)(n ? n : 1), sizeof(Record));
    if (records == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *score = PyTuple_GET_ITEM(scores, i);
        Record *r = &records[i];
        PyObject *key = template_key(score, agent, scenario, label_of, error_type_of, label_error);
        if (key == NULL)
            goto fail;
        r->template = template_of(key, templates, make);
        Py_DECREF(key);
        if (r->template == NULL)
            goto fail;
        PyObject *value;
        r->has_value = value_of(score, &r->value, &value);
        Py_XDECREF(value);
        if (r->has_value < 0)
            goto fail;
        r->explanation = explanation_of(score, &r->text, &r->size);
        if (r->explanation == NULL)
            goto fail;
        Py_ssize_t size = PyBytes_GET_SIZE(start) + PyBytes_GET_SIZE(end);
        for (int part = 0; part < 3; part++)
            size += PyBytes_GET_SIZE(PyTuple_GET_ITEM(r->template, part));
        if (r->has_value)
            size += PyBytes_GET_SIZE(value_head) + 8;
        size += string_attribute_size(PyBytes_GET_SIZE(key_field), r->size);
        r->record = size;
        total += 1 + varint_size((uint64_t)size) + size;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL)
        goto fail;
    uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        Record *r = &records[i];
        *p++ = 0x12; /* ScopeLogs.log_records */
        p = put_varint(p, (uint64_t)r->record);
        /* The fields in field-number order, as events._record joins them. */
        p = put_bytes(p, start);
        p = put_bytes(p, PyTuple_GET_ITEM(r->template, 0));
        if (r->has_value) {
            p = put_bytes(p, value_head);
            p = put_double(p, r->value);
        }
        p = put_bytes(p, PyTuple_GET_ITEM(r->template, 1));
        p = put_string_attribute(p, 0x32, key_field, r->explanation, r->size);
        p = put_bytes(p, PyTuple_GET_ITEM(r->template, 2));
        p = put_bytes(p, end);
    }
    records_free(records, n);
    return out;
fail:
    records_free(records, n);
    return NULL;
}

/* ---- score attributes of the agent span --------------------------------------------------- */

/* A score name's pieces, as encoded_attributes._ScorePieces.native holds them. */
enum { P_SCORE_KEY, P_LABEL_KEY, P_EXPLANATION_KEY, P_VALUE_HEAD, P_LABELS, P_KEY_FIELD,
       P_LABEL_FIELD, P_SIZE };

static PyObject *pieces_of(PyObject *name, PyObject *by_name, PyObject *make) {
    PyObject *pieces = PyDict_GetItemWithError(by_name, name);
    if (pieces != NULL)
        return Py_NewRef(pieces);
    if (PyErr_Occurred())
        return NULL;
    pieces = PyObject_CallOneArg(make, name); /* makes and remembers them */
    if (pieces == NULL)
        return NULL;
    if (!PyTuple_CheckExact(pieces) || PyTuple_GET_SIZE(pieces) != P_SIZE ||
        !PyDict_Check(PyTuple_GET_ITEM(pieces, P_LABELS)) ||
        !is_bytes(PyTuple_GET_ITEM(pieces, P_VALUE_HEAD), "a value head") ||
        !is_bytes(PyTuple_GET_ITEM(pieces, P_KEY_FIELD), "a key field")) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "malformed score pieces");
        Py_DECREF(pieces);
        return NULL;
    }
    return pieces;
}

/* Appends `more` bytes to the growing `*out` (an owned bytes), at `*used`. */
static int grow(PyObject **out, Py_ssize_t *used, Py_ssize_t more) {
    Py_ssize_t size = PyBytes_GET_SIZE(*out);
    if (*used + more <= size)
        return 0;
    Py_ssize_t want = size * 2 > *used + more ? size * 2 : *used + more;
    return _PyBytes_Resize(out, want);
}

static int append(PyObject **out, Py_ssize_t *used, const void *data, Py_ssize_t n) {
    if (grow(out, used, n) < 0)
        return -1;
    memcpy(PyBytes_AS_STRING(*out) + *used, data, (size_t)n);
    *used += n;
    return 0;
}

/* One score's attributes into `items` and their fields onto `out`: how many fields, or -1. */
static int score_fields(PyObject *score, PyObject *items, PyObject *by_name, PyObject *make,
                        PyObject *label_of, PyObject **out, Py_ssize_t *used) {
    int ok = -1, fields = 0;
    PyObject *name = NULL, *pieces = NULL, *value = NULL, *label = NULL, *error = NULL;
    PyObject *text = NULL, *number = NULL;
    name = PyObject_GetAttr(score, s_name);
    if (name == NULL || (pieces = pieces_of(name, by_name, make)) == NULL)
        goto done;
    double v;
    int has_value = value_of(score, &v, &value);
    if (has_value < 0)
        goto done;
    if (has_value) {
        /* The attribute is always a double, whatever number the score holds. */
        number = PyFloat_CheckExact(value) ? Py_NewRef(value) : PyFloat_FromDouble(v);
        if (number == NULL || PyDict_SetItem(items, PyTuple_GET_ITEM(pieces, P_SCORE_KEY),
                                             number) < 0)
            goto done;
        PyObject *head = PyTuple_GET_ITEM(pieces, P_VALUE_HEAD);
        uint8_t bits[8];
        if (append(out, used, PyBytes_AS_STRING(head), PyBytes_GET_SIZE(head)) < 0)
            goto done;
        put_double(bits, v);
        if (append(out, used, bits, 8) < 0)
            goto done;
        fields++;
    }
    if ((label = PyObject_GetAttr(score, s_label)) == NULL ||
        (error = PyObject_GetAttr(score, s_error)) == NULL)
        goto done;
    if (label == Py_None || error != Py_None) {
        Py_SETREF(label, PyObject_CallOneArg(label_of, score));
        if (label == NULL)
            goto done;
    }
    if (label != Py_None) {
        if (PyDict_SetItem(items, PyTuple_GET_ITEM(pieces, P_LABEL_KEY), label) < 0)
            goto done;
        PyObject *field = PyDict_GetItemWithError(PyTuple_GET_ITEM(pieces, P_LABELS), label);
        if (field != NULL) {
            Py_INCREF(field);
        } else {
            if (PyErr_Occurred())
                goto done;
            field = PyObject_CallOneArg(PyTuple_GET_ITEM(pieces, P_LABEL_FIELD), label);
            if (field == NULL)
                goto done;
        }
        int failed = !is_bytes(field, "a label field") ||
                     append(out, used, PyBytes_AS_STRING(field), PyBytes_GET_SIZE(field)) < 0;
        Py_DECREF(field);
        if (failed)
            goto done;
        fields++;
    }
    Py_ssize_t size;
    const char *data = explanation_of(score, &text, &size);
    if (data == NULL ||
        PyDict_SetItem(items, PyTuple_GET_ITEM(pieces, P_EXPLANATION_KEY), text) < 0)
        goto done;
    PyObject *key_field = PyTuple_GET_ITEM(pieces, P_KEY_FIELD);
    Py_ssize_t need = string_attribute_size(PyBytes_GET_SIZE(key_field), size);
    if (grow(out, used, need) < 0)
        goto done;
    put_string_attribute((uint8_t *)PyBytes_AS_STRING(*out) + *used, 0x4a, key_field, data, size);
    *used += need;
    ok = fields + 1;
done:
    Py_XDECREF(name);
    Py_XDECREF(pieces);
    Py_XDECREF(value);
    Py_XDECREF(number);
    Py_XDECREF(label);
    Py_XDECREF(error);
    Py_XDECREF(text);
    return ok;
}

/* encode_score_fields(scores, items, by_name, make_pieces, label_of, tail) -> bytes or None:
 * each score's attributes set in `items` (a dict, filled in place) and their Span.attributes
 * fields, then `tail`; None when two scores share a name (`items` then holds fewer keys than
 * fields were written: the caller encodes what it holds). The twin is
 * encoded_attributes.python_score_fields. */
PyObject *tracescore_encode_score_fields(PyObject *self, PyObject *const *args,
                                         Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "encode_score_fields takes 6 arguments");
        return NULL;
    }
    PyObject *scores = args[0], *items = args[1], *by_name = args[2], *make = args[3];
    PyObject *label_of = args[4], *tail = args[5];
    if (!PyTuple_CheckExact(scores) || !PyDict_Check(items) || !PyDict_Check(by_name)) {
        PyErr_SetString(PyExc_TypeError,
                        "encode_score_fields: scores is a tuple, items and by_name dicts");
        return NULL;
    }
    if (!is_bytes(tail, "tail") || intern_names() < 0)
        return NULL;
    Py_ssize_t before = PyDict_GET_SIZE(items), written = 0, used = 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, 512);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(scores); i++) {
        int fields = score_fields(PyTuple_GET_ITEM(scores, i), items, by_name, make, label_of,
                                  &out, &used);
        if (fields < 0) {
            Py_DECREF(out);
            return NULL;
        }
        written += fields;
    }
    if (PyDict_GET_SIZE(items) - before != written) { /* a name twice: a key set twice */
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    if (append(&out, &used, PyBytes_AS_STRING(tail), PyBytes_GET_SIZE(tail)) < 0 ||
        _PyBytes_Resize(&out, used) < 0)
        return NULL;
    return out;
}
