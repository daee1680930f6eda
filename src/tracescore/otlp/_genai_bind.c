/* What bind_genai binds (see _genai.c for the API): the classes, slot offsets, keys and
 * constants the GenAI reader and the flat-run builder use (`bound`, _genai.h), and the key
 * table it fills, through which the reader finds the keys it reads in a span's attributes. */
#include "_genai.h"
#include <structmember.h>

static const char *view_fields[V_FIELDS] = {
    "role", "convention", "tool_name", "call_id", "error", "error_type", "error_message",
    "model", "input_tokens", "output_tokens", "output", "agent_name", "input", "tools",
    "arguments", "result", "pause_reason", "output_tool", "requests", "responses",
    "output_tool_names", "warnings",
};

static const char *tool_call_fields[C_FIELDS] = {
    "name", "call_id", "arguments", "result", "status", "error_type", "error_message",
    "pause_reason", "start_ns", "end_ns", "span_id", "agent",
};

static const char *model_call_fields[M_FIELDS] = {
    "model", "input_tokens", "output_tokens", "start_ns", "end_ns", "span_id",
};

/* What bind_genai bound: classes, slot offsets, keys and constants (see _genai.h). */
Bound bound;

/* The offset of slot `name` of `type`, or -1 with TypeError set (_checks.c binds with it too). */
Py_ssize_t tracescore_slot_offset(PyObject *type, const char *name) {
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)descr)->d_member->type != T_OBJECT_EX) {
        Py_XDECREF(descr);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s is not a slot of %R", name, type);
        return -1;
    }
    Py_ssize_t offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    return offset;
}

/* The offsets of the member descriptors `members` (a tuple: each the slot of field `names[n]`
 * of `type`) into `offsets`; -1 with TypeError set when one is not. */
static int member_offsets(PyObject *type, PyObject *members, const char **names, int count,
                          Py_ssize_t *offsets) {
    if (!PyTuple_Check(members) || PyTuple_GET_SIZE(members) != count) {
        PyErr_SetString(PyExc_TypeError, "bind_genai: unexpected step fields");
        return -1;
    }
    for (int n = 0; n < count; n++) {
        PyObject *descr = PyTuple_GET_ITEM(members, n);
        if (!Py_IS_TYPE(descr, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)descr)->d_member->type != T_OBJECT_EX ||
            (PyObject *)((PyMemberDescrObject *)descr)->d_common.d_type != type ||
            strcmp(((PyMemberDescrObject *)descr)->d_member->name, names[n])) {
            PyErr_Format(PyExc_TypeError, "bind_genai: step field %s is not a slot", names[n]);
            return -1;
        }
        offsets[n] = ((PyMemberDescrObject *)descr)->d_member->offset;
    }
    return 0;
}

#define SET(field, value) Py_XSETREF(bound.field, Py_NewRef(value))

static int fill_key_table(PyObject *markers);

PyObject *tracescore_bind_genai(PyObject *self, PyObject *args) {
    PyObject *record, *view, *names, *defaults, *keys, *ops, *execute_tool, *roles,
        *convention, *statuses, *deferred, *parse_lenient, *needles, *fallback, *markers,
        *pydantic_ai_scope, *ai_prefix, *invoke_agent, *genai_prefixes, *tool_call, *tool_members,
        *model_call, *model_members, *status_ok, *status_error;
    long max_kind;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!UUO!UO!OOO!OO!UUO!(O!OO!OUUl)", &PyType_Type, &record,
                          &PyType_Type, &view, &PyTuple_Type, &names, &PyTuple_Type,
                          &defaults, &PyTuple_Type, &keys, &PyTuple_Type, &ops, &execute_tool,
                          &invoke_agent, &PyTuple_Type, &roles, &convention, &PyTuple_Type,
                          &statuses, &deferred, &parse_lenient, &PyTuple_Type, &needles,
                          &fallback, &PyFrozenSet_Type, &markers, &pydantic_ai_scope, &ai_prefix,
                          &PyTuple_Type, &genai_prefixes, &PyType_Type, &tool_call, &tool_members,
                          &PyType_Type, &model_call, &model_members, &status_ok, &status_error,
                          &max_kind))
        return NULL;
    Py_ssize_t tool_offsets[C_FIELDS], model_offsets[M_FIELDS];
    if (member_offsets(tool_call, tool_members, tool_call_fields, C_FIELDS, tool_offsets) < 0 ||
        member_offsets(model_call, model_members, model_call_fields, M_FIELDS, model_offsets) < 0)
        return NULL;
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(genai_prefixes); n++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(genai_prefixes, n)))
            return PyErr_Format(PyExc_TypeError, "bind_genai: name prefixes are str");
    if (PyTuple_GET_SIZE(names) != V_FIELDS || PyTuple_GET_SIZE(defaults) != V_FIELDS ||
        PyTuple_GET_SIZE(keys) != K_COUNT || PyTuple_GET_SIZE(roles) != 3 ||
        PyTuple_GET_SIZE(statuses) != 3 || PyTuple_GET_SIZE(needles) != 2)
        return PyErr_Format(PyExc_TypeError, "bind_genai: unexpected tuple sizes");
    /* A view built here never runs __init__: its fields must be exactly the slots set below. */
    Py_ssize_t offsets[V_FIELDS];
    for (int n = 0; n < V_FIELDS; n++) {
        PyObject *name = PyTuple_GET_ITEM(names, n);
        if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, view_fields[n]))
            return PyErr_Format(PyExc_TypeError, "bind_genai: SpanView field %d is not %s", n,
                                view_fields[n]);
        if ((offsets[n] = tracescore_slot_offset(view, view_fields[n])) < 0) return NULL;
    }
    Py_ssize_t attributes = tracescore_slot_offset(record, "attributes");
    Py_ssize_t events = tracescore_slot_offset(record, "events");
    Py_ssize_t status_code = tracescore_slot_offset(record, "status_code");
    Py_ssize_t status_message = tracescore_slot_offset(record, "status_message");
    Py_ssize_t name = tracescore_slot_offset(record, "name");
    Py_ssize_t scope = tracescore_slot_offset(record, "scope");
    Py_ssize_t span_id = tracescore_slot_offset(record, "span_id");
    Py_ssize_t parent_span_id = tracescore_slot_offset(record, "parent_span_id");
    Py_ssize_t start_ns = tracescore_slot_offset(record, "start_ns");
    Py_ssize_t end_ns = tracescore_slot_offset(record, "end_ns");
    Py_ssize_t kind = tracescore_slot_offset(record, "kind");
    if (attributes < 0 || events < 0 || status_code < 0 || status_message < 0 || name < 0 ||
        scope < 0 || span_id < 0 || parent_span_id < 0 || start_ns < 0 || end_ns < 0 ||
        kind < 0)
        return NULL;
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(ops); n++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(ops, n)))
            return PyErr_Format(PyExc_TypeError, "bind_genai: model operations are str");
    for (int n = 0; n < K_COUNT; n++) {
        PyObject *key = PyTuple_GET_ITEM(keys, n);
        if (!PyUnicode_CheckExact(key))
            return PyErr_Format(PyExc_TypeError, "bind_genai: keys are str");
        Py_INCREF(key);
        PyUnicode_InternInPlace(&key);
        Py_XSETREF(bound.keys[n], key);
    }
    /* ASCII needles: a 1-byte result is searched byte by byte (contains, read_tool). */
    for (int n = 0; n < 2; n++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(needles, n)) ||
            !PyUnicode_IS_ASCII(PyTuple_GET_ITEM(needles, n)) ||
            PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(needles, n)) == 0)
            return PyErr_Format(PyExc_TypeError, "bind_genai: needles are ASCII str");
    memcpy(bound.view_offsets, offsets, sizeof offsets);
    bound.attributes = attributes;
    bound.events = events;
    bound.status_code = status_code;
    bound.status_message = status_message;
    bound.name = name;
    bound.scope = scope;
    bound.span_id = span_id;
    bound.parent_span_id = parent_span_id;
    bound.start_ns = start_ns;
    bound.end_ns = end_ns;
    bound.kind = kind;
    bound.max_kind = max_kind;
    memcpy(bound.tool_call_offsets, tool_offsets, sizeof tool_offsets);
    memcpy(bound.model_call_offsets, model_offsets, sizeof model_offsets);
    SET(tool_call_type, tool_call);
    SET(model_call_type, model_call);
    SET(status_ok, status_ok);
    SET(status_error, status_error);
    SET(record_type, record);
    SET(view_type, view);
    SET(view_defaults, defaults);
    SET(model_ops, ops);
    SET(execute_tool, execute_tool);
    SET(invoke_agent, invoke_agent);
    SET(tool_role, PyTuple_GET_ITEM(roles, 0));
    SET(model_role, PyTuple_GET_ITEM(roles, 1));
    SET(agent_role, PyTuple_GET_ITEM(roles, 2));
    SET(genai_prefixes, genai_prefixes);
    SET(convention, convention);
    SET(unset, PyTuple_GET_ITEM(statuses, 0));
    SET(ok, PyTuple_GET_ITEM(statuses, 1));
    SET(error, PyTuple_GET_ITEM(statuses, 2));
    SET(deferred, deferred);
    SET(parse_lenient, parse_lenient);
    SET(needles, needles);
    SET(fallback, fallback);
    SET(markers, markers);
    if (fill_key_table(markers) < 0) return NULL;
    SET(pydantic_ai_scope, pydantic_ai_scope);
    SET(ai_prefix, ai_prefix);
    return PyCFunction_New(&tracescore_flat_run_def, NULL);
}

/* Whether `name` starts with one of the span names GenAI reads without an operation
 * (1, 0, or -1 on error). */
int tracescore_genai_name(PyObject *name) {
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(bound.genai_prefixes); n++) {
        PyObject *prefix = PyTuple_GET_ITEM(bound.genai_prefixes, n);
        if (PyUnicode_GET_LENGTH(name) < PyUnicode_GET_LENGTH(prefix)) continue;
        Py_ssize_t at = PyUnicode_Tailmatch(name, prefix, 0, PyUnicode_GET_LENGTH(prefix), -1);
        if (at) return (int)at;
    }
    return 0;
}

/* Which key an attribute key is: its K_* index, MARKER (another convention's marker key),
 * OTHER, or NOT_TEXT (not an exact str); ERROR on error. An open-addressing table over the
 * read keys and the markers: a span's keys come from a few str objects the decoder shares, so
 * most lookups end at the first pointer comparison. */
enum { OTHER = -1, NOT_TEXT = -2, ERROR = -3, MARKER = K_COUNT };
#define KEY_TABLE 128 /* at most half full, so every probe ends at a free entry */
static int key_count;
static struct {
    PyObject *key; /* strong, NULL when free */
    Py_hash_t hash;
    int index;
} key_table[KEY_TABLE];

static int key_index(PyObject *key) {
    if (!PyUnicode_CheckExact(key)) return NOT_TEXT;
    Py_hash_t hash = PyObject_Hash(key); /* cached in the str after the first call */
    if (hash == -1) return ERROR;
    for (size_t at = (size_t)hash % KEY_TABLE;; at = (at + 1) % KEY_TABLE) {
        PyObject *kept = key_table[at].key;
        if (kept == NULL) return OTHER;
        if (kept == key || (key_table[at].hash == hash && same_text(kept, key)))
            return key_table[at].index;
    }
}

/* Enters `key` (an exact str) as `index` unless it is there already; -1 on error. */
static int enter_key(PyObject *key, int index) {
    Py_hash_t hash = PyObject_Hash(key);
    if (hash == -1) return -1;
    size_t at = (size_t)hash % KEY_TABLE;
    for (;; at = (at + 1) % KEY_TABLE) {
        PyObject *kept = key_table[at].key;
        if (kept == NULL) break;
        if (key_table[at].hash == hash && same_text(kept, key)) return 0;
    }
    if (key_count >= KEY_TABLE / 2) {
        PyErr_SetString(PyExc_ValueError, "bind_genai: too many keys");
        return -1;
    }
    key_table[at].key = Py_NewRef(key);
    key_table[at].hash = hash;
    key_table[at].index = index;
    key_count++;
    return 0;
}

/* The key table of `markers` (first: a marker key is one whatever else it is) and the keys
 * read; -1 on error. */
static int fill_key_table(PyObject *markers) {
    for (int n = 0; n < KEY_TABLE; n++) Py_CLEAR(key_table[n].key);
    key_count = 0;
    PyObject *iterator = PyObject_GetIter(markers), *marker;
    if (iterator == NULL) return -1;
    while ((marker = PyIter_Next(iterator)) != NULL) {
        int entered = PyUnicode_CheckExact(marker) ? enter_key(marker, MARKER) : -1;
        if (entered < 0 && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "bind_genai: marker keys are str");
        Py_DECREF(marker);
        if (entered < 0) break;
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) return -1;
    for (int n = 0; n < K_COUNT; n++)
        if (enter_key(bound.keys[n], n) < 0) return -1;
    return 0;
}

/* One pass over `attrs`: the value of each key read into `found` (borrowed), as classify's
 * dict lookups would find them. 1, or 0 when a key is a marker or not an exact str (the span
 * is not plain GenAI; a non-str key is left to Python), -1 on error. */
int tracescore_find_keys(PyObject *attrs, PyObject **found) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        int index = key_index(key);
        if (index == ERROR) return -1;
        if (index == MARKER || index == NOT_TEXT) return 0;
        if (index >= 0) found[index] = value;
    }
    return 1;
}
