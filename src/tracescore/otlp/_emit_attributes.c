/* The score attributes of a scored run's agent span (export/encoded_attributes.py), written
 * in one call; see _emit.h. */
#include "_emit.h"

/* A score name's pieces, as encoded_attributes._ScorePieces.native holds them. */
enum { P_SCORE_KEY, P_LABEL_KEY, P_EXPLANATION_KEY, P_VALUE_HEAD, P_LABELS, P_KEY_FIELD,
       P_LABEL_FIELD, P_SIZE };

static PyObject *pieces_of(PyObject *name, PyObject *by_name, PyObject *make) {
    PyObject *pieces = remembered(by_name, name, make);
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
    name = PyObject_GetAttr(score, tracescore_score_fields[S_NAME]);
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
    if ((label = PyObject_GetAttr(score, tracescore_score_fields[S_LABEL])) == NULL ||
        (error = PyObject_GetAttr(score, tracescore_score_fields[S_ERROR])) == NULL)
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
    if (!is_bytes(tail, "tail") || tracescore_score_names() < 0)
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
