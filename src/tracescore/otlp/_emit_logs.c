/* A scored run's gen_ai.evaluation.result log records (export/events.py), written in one call;
 * see _emit.h. */
#include "_emit.h"

PyObject *tracescore_score_fields[S_FIELDS];

int tracescore_score_names(void) {
    static const char *names[S_FIELDS] = {"name", "value", "label", "error", "explanation",
                                          "digest"};
    if (tracescore_score_fields[S_FIELDS - 1] != NULL)
        return 0;
    for (int n = 0; n < S_FIELDS; n++) {
        if (tracescore_score_fields[n] == NULL &&
            (tracescore_score_fields[n] = PyUnicode_InternFromString(names[n])) == NULL)
            return -1;
    }
    return 0;
}

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
    PyObject *error = PyObject_GetAttr(score, tracescore_score_fields[S_ERROR]);
    if (error == NULL)
        return NULL;
    PyObject *label, *kind;
    if (error == Py_None) {
        label = PyObject_GetAttr(score, tracescore_score_fields[S_LABEL]);
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
    PyObject *name = PyObject_GetAttr(score, tracescore_score_fields[S_NAME]);
    PyObject *digest = PyObject_GetAttr(score, tracescore_score_fields[S_DIGEST]);
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
    PyObject *template = remembered(templates, key, make);
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
        tracescore_score_names() < 0)
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
