/* The trajectory builder's reading of plain OTel GenAI `execute_tool`, model (`chat`, ...) and
 * `invoke_agent` spans, for the simplest and most common shapes only (see
 * trajectory/_genai_native.py), and of spans no convention recognises.
 *
 * Why native: classifying a span in Python cost about 14k instructions, 42% of building a run,
 * and most production spans are plain GenAI tool, chat and agent spans whose views are a
 * handful of attribute reads. This builds exactly the SpanView `tracescore.trajectory._genai.read`
 * builds for them, slots filled directly (as _records.c fills SpanRecords), answers None for a
 * span with no convention's marker and no GenAI operation or span name (an HTTP span), as
 * classify does, and the FALLBACK sentinel for anything else (exception events, non-ASCII or
 * non-text values, messages, tool definitions, ...), so the caller then runs the Python reader.
 * Tests compare both on every fixture span, the benchmark's spans and generated attribute dicts.
 *
 * bind_genai(SpanRecord, SpanView, SpanView field names, their defaults, keys, model ops,
 *            execute_tool op, invoke_agent op, (tool role, model role, agent role), convention,
 *            (UNSET, OK, ERROR) statuses, Deferred, parse_lenient, error result needles,
 *            FALLBACK, other conventions' marker keys, pydantic-ai's scope, Vercel's span name
 *            prefix, the span name prefixes GenAI reads without an operation, (ToolCall, its
 *            fields' slots, ModelCall, its fields' slots, "ok", "error", the largest known span
 *            kind)) -> flat_run: once, first.
 * read_plain_genai(span, max_value_chars) -> SpanView | None | FALLBACK: `classify(span)` itself
 *   when it answers (it checks no other convention marks the span, as classify's first branch
 *   does), else FALLBACK.
 * flat_run(ordered, max_value_chars, output_tool_names, include_output_tools): a trace that is
 *   one flat run of plain spans, checked, read and made into steps in one call (_flat.c).
 */
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

/* The offset of slot `name` of `type`, or -1 with TypeError set. */
static Py_ssize_t slot_offset(PyObject *type, const char *name) {
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)descr)->d_member->type != T_OBJECT_EX) {
        Py_XDECREF(descr);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "bind_genai: %s is not a slot", name);
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
        if ((offsets[n] = slot_offset(view, view_fields[n])) < 0) return NULL;
    }
    Py_ssize_t attributes = slot_offset(record, "attributes");
    Py_ssize_t events = slot_offset(record, "events");
    Py_ssize_t status_code = slot_offset(record, "status_code");
    Py_ssize_t status_message = slot_offset(record, "status_message");
    Py_ssize_t name = slot_offset(record, "name");
    Py_ssize_t scope = slot_offset(record, "scope");
    Py_ssize_t span_id = slot_offset(record, "span_id");
    Py_ssize_t parent_span_id = slot_offset(record, "parent_span_id");
    Py_ssize_t start_ns = slot_offset(record, "start_ns");
    Py_ssize_t end_ns = slot_offset(record, "end_ns");
    Py_ssize_t kind = slot_offset(record, "kind");
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


/* Whitespace as str.strip() sees it in ASCII text. */
static int ascii_space(Py_UCS1 c) {
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31);
}

/* clean_id of ASCII text: stripped, and None when nothing is left (new reference). */
static PyObject *clean_ascii_id(PyObject *text) {
    const Py_UCS1 *data = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t start = 0, stop = PyUnicode_GET_LENGTH(text);
    while (start < stop && ascii_space(data[start])) start++;
    while (stop > start && ascii_space(data[stop - 1])) stop--;
    if (start == stop) Py_RETURN_NONE;
    if (start == 0 && stop == PyUnicode_GET_LENGTH(text)) return Py_NewRef(text);
    return PyUnicode_Substring(text, start, stop);
}

/* parse_later(text, limit) of exact str text: Deferred(parse_lenient, text, limit). */
static PyObject *later(PyObject *text, PyObject *limit) {
    PyObject *call[3] = {bound.parse_lenient, text, limit};
    return PyObject_Vectorcall(bound.deferred, call, 3, NULL);
}

/* A SpanView with `values` set (stolen, NULL = the field's default), or NULL. */
static PyObject *view_of(PyObject **values) {
    PyObject *view = NULL;
    for (int n = 0; n < V_FIELDS; n++)
        if (values[n] == NULL && n != V_ROLE && n != V_CONVENTION)
            values[n] = Py_NewRef(PyTuple_GET_ITEM(bound.view_defaults, n));
    int ok = 1;
    for (int n = 0; n < V_FIELDS; n++) ok = ok && values[n] != NULL;
    PyTypeObject *type = (PyTypeObject *)bound.view_type;
    if (ok) view = type->tp_alloc(type, 0);
    if (view == NULL) {
        for (int n = 0; n < V_FIELDS; n++) Py_XDECREF(values[n]);
        return NULL;
    }
    for (int n = 0; n < V_FIELDS; n++) SLOT(view, bound.view_offsets[n]) = values[n];
    return view;
}

/* What a reader answers for the field values `values` (stolen, NULL = the field's default):
 * their view, or with `out` (flat_run, which makes a step of them and needs no view) the
 * values moved there, and True. */
static PyObject *made(PyObject **values, PyObject **out) {
    if (out == NULL) return view_of(values);
    memcpy(out, values, V_FIELDS * sizeof *values);
    Py_RETURN_TRUE;
}

/* Whether messages or tool definitions were recorded: a view with those is Python's. The
 * values `attrs` were found in one pass over the attributes (`find_keys`). */
static int recorded_messages(PyObject **attrs) {
    return attrs[K_OUTPUT_MESSAGES] != NULL || attrs[K_INPUT_MESSAGES] != NULL ||
           attrs[K_TOOL_DEFINITIONS] != NULL;
}

/* Whether `want` (`size` >= 1 bytes) occurs in `data`: memchr for its first byte, then the rest
 * compared. For the needles here and the texts tools return, several times cheaper than glibc's
 * memmem, which hashes every byte (measured: ~9 instructions a byte of a bench result). */
static int contains(const Py_UCS1 *data, Py_ssize_t len, const Py_UCS1 *want, Py_ssize_t size) {
    if (len < size) return 0;
    const Py_UCS1 *at = data, *last = data + (len - size);
    while (at <= last) {
        at = memchr(at, want[0], (size_t)(last - at) + 1);
        if (at == NULL) return 0;
        Py_ssize_t n = 1;
        while (n < size && at[n] == want[n]) n++;
        if (n == size) return 1;
        at++; /* an occurrence may start inside this partial one ("rrror") */
    }
    return 0;
}

/* may_be_error_result(text): 1 when a needle occurs in `text`, 0 if not, -1 on error. */
static int may_be_error_result(PyObject *text) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    for (int n = 0; n < 2; n++) {
        PyObject *needle = PyTuple_GET_ITEM(bound.needles, n);
        if (PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND) {
            /* ASCII needles (bind_genai checks) in 1-byte text: a byte search, the common case
             * (PyUnicode_Find cost about 500 instructions a call). */
            const Py_UCS1 *want = PyUnicode_1BYTE_DATA(needle);
            if (contains(PyUnicode_1BYTE_DATA(text), len, want, PyUnicode_GET_LENGTH(needle)))
                return 1;
            continue;
        }
        Py_ssize_t at = PyUnicode_Find(text, needle, 0, len, 1);
        if (at == -2) return -1;
        if (at >= 0) return 1;
    }
    return 0;
}

/* An absent value (NULL) or an empty exact ASCII str as None, an exact ASCII str as itself
 * (borrowed): as_text(value) or None. NULL with *plain cleared when the value is not plain. */
static PyObject *ascii_or_none(PyObject *value, int *plain) {
    if (value == NULL) return Py_None;
    if (!PyUnicode_CheckExact(value) || !PyUnicode_IS_ASCII(value)) {
        *plain = 0;
        return NULL;
    }
    return PyUnicode_GET_LENGTH(value) ? value : Py_None;
}

/* read_tool, when no exception event was recorded and every value is plain ASCII text.
 * error_info's reading: failed on status ERROR or a non-empty `error.type`; the message is the
 * status message, else `error.message`. */
static PyObject *read_tool(PyObject *span, PyObject **attrs, PyObject *limit, PyObject **out) {
    PyObject *events = SLOT(span, bound.events), *status = SLOT(span, bound.status_code);
    if (events == NULL || !PyTuple_CheckExact(events) || PyTuple_GET_SIZE(events) != 0 ||
        (status != bound.unset && status != bound.ok && status != bound.error))
        return DECLINE();
    int plain = 1;
    PyObject *error_type = attrs[K_ERROR_TYPE], *name = attrs[K_TOOL_NAME];
    PyObject *call_id = attrs[K_CALL_ID], *arguments = attrs[K_ARGUMENTS];
    PyObject *result = attrs[K_RESULT], *message = Py_None;
    error_type = ascii_or_none(error_type, &plain);
    int error = status == bound.error || (plain && error_type != Py_None);
    if (plain && error) {
        message = ascii_or_none(SLOT(span, bound.status_message), &plain);
        if (plain && message == Py_None) message = ascii_or_none(attrs[K_ERROR_MESSAGE], &plain);
    }
    /* An empty name falls back to the span name's suffix: Python's business. */
    if (!plain || name == NULL || !PyUnicode_CheckExact(name) || !PyUnicode_IS_ASCII(name) ||
        PyUnicode_GET_LENGTH(name) == 0)
        return DECLINE();
    if (call_id != NULL && (!PyUnicode_CheckExact(call_id) || !PyUnicode_IS_ASCII(call_id)))
        return DECLINE();
    if (arguments != NULL && !PyUnicode_CheckExact(arguments)) return DECLINE();
    if (result != NULL) {
        if (!PyUnicode_CheckExact(result)) return DECLINE();
        /* A result of a call that did not fail and may be an MCP isError one is parsed now:
         * Python's business. */
        int maybe = error ? 0 : may_be_error_result(result);
        if (maybe < 0) return NULL;
        if (maybe) return DECLINE();
    }
    PyObject *values[V_FIELDS] = {
        [V_ROLE] = Py_NewRef(bound.tool_role),
        [V_CONVENTION] = Py_NewRef(bound.convention),
        [V_TOOL_NAME] = Py_NewRef(name),
        [V_CALL_ID] = call_id != NULL ? clean_ascii_id(call_id) : Py_NewRef(Py_None),
        /* error_info's (failed, error type, message); (False, None, None) without a failure */
        [V_ERROR] = Py_NewRef(error ? Py_True : Py_False),
        [V_ERROR_TYPE] = Py_NewRef(error ? error_type : Py_None),
        [V_ERROR_MESSAGE] = Py_NewRef(error ? message : Py_None),
    };
    /* Absent arguments or result stay MISSING (the default); a NULL here is a failed call. */
    int ok = values[V_CALL_ID] != NULL;
    if (ok && arguments != NULL) ok = (values[V_ARGUMENTS] = later(arguments, limit)) != NULL;
    if (ok && result != NULL) ok = (values[V_RESULT] = later(result, limit)) != NULL;
    if (!ok) {
        for (int n = 0; n < V_FIELDS; n++) Py_XDECREF(values[n]);
        return NULL;
    }
    return made(values, out);
}

/* A token count: the exact int under `key`, else under `fallback_key` when `key` is absent,
 * else None (borrowed). NULL when the value is not plain (the caller declines). */
static PyObject *tokens(PyObject **attrs, int key, int fallback_key) {
    PyObject *value = attrs[key] != NULL ? attrs[key] : attrs[fallback_key];
    if (value == NULL) return Py_None;
    return PyLong_CheckExact(value) ? value : NULL;
}

/* An exact ASCII str or an absent value (Py_None), borrowed; NULL otherwise. */
static PyObject *plain_text(PyObject *value) {
    if (value == NULL) return Py_None;
    return PyUnicode_CheckExact(value) && PyUnicode_IS_ASCII(value) ? value : NULL;
}

/* read_model, when no messages or tool definitions were recorded and values are plain. */
static PyObject *read_model(PyObject **attrs, PyObject **out) {
    if (recorded_messages(attrs)) return DECLINE();
    PyObject *input_tokens = tokens(attrs, K_INPUT_TOKENS, K_PROMPT_TOKENS);
    PyObject *output_tokens = tokens(attrs, K_OUTPUT_TOKENS, K_COMPLETION_TOKENS);
    PyObject *model = plain_text(attrs[K_RESPONSE_MODEL]);
    /* `model or as_text(request model)`: an empty response model counts as none. */
    if (model != NULL && (model == Py_None || PyUnicode_GET_LENGTH(model) == 0))
        model = plain_text(attrs[K_REQUEST_MODEL]);
    if (input_tokens == NULL || output_tokens == NULL || model == NULL) return DECLINE();
    PyObject *values[V_FIELDS] = {
        [V_ROLE] = Py_NewRef(bound.model_role),
        [V_CONVENTION] = Py_NewRef(bound.convention),
        [V_TOOL_NAME] = Py_NewRef(Py_None),
        [V_CALL_ID] = Py_NewRef(Py_None),
        [V_ERROR] = Py_NewRef(Py_None),
        [V_ERROR_TYPE] = Py_NewRef(Py_None),
        [V_ERROR_MESSAGE] = Py_NewRef(Py_None),
        [V_MODEL] = Py_NewRef(model),
        [V_INPUT_TOKENS] = Py_NewRef(input_tokens),
        [V_OUTPUT_TOKENS] = Py_NewRef(output_tokens),
        [V_OUTPUT] = Py_NewRef(Py_None),
    };
    return made(values, out);
}

/* read_agent, when no messages or tool definitions were recorded and the agent name is plain
 * non-empty ASCII text: the view is the name alone (with no messages, input, output, requests
 * and responses stay None; events and status are not read). */
static PyObject *read_agent(PyObject **attrs, PyObject **out) {
    if (recorded_messages(attrs)) return DECLINE();
    PyObject *name = attrs[K_AGENT_NAME];
    /* An empty or absent name falls back to the span name's suffix or the agent id: Python's
     * business. */
    if (name == NULL || !PyUnicode_CheckExact(name) || !PyUnicode_IS_ASCII(name) ||
        PyUnicode_GET_LENGTH(name) == 0)
        return DECLINE();
    PyObject *values[V_FIELDS] = {
        [V_ROLE] = Py_NewRef(bound.agent_role),
        [V_CONVENTION] = Py_NewRef(bound.convention),
        [V_AGENT_NAME] = Py_NewRef(name),
    };
    return made(values, out);
}

/* Whether `name` starts with one of the span names GenAI reads without an operation
 * (1, 0, or -1 on error). */
static int genai_name(PyObject *name) {
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
static int find_keys(PyObject *attrs, PyObject **found) {
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

/* read_plain_genai once bound: a view, None or FALLBACK (new reference), NULL on error; with
 * `out`, True and the view's field values there instead of a view (see `made`). */
PyObject *tracescore_read_plain(PyObject *span, PyObject *limit, PyObject **out) {
    if ((PyObject *)Py_TYPE(span) != bound.record_type) return DECLINE();
    PyObject *attrs = SLOT(span, bound.attributes);
    PyObject *name = SLOT(span, bound.name), *scope = SLOT(span, bound.scope);
    if (attrs == NULL || !PyDict_CheckExact(attrs) || name == NULL ||
        !PyUnicode_CheckExact(name) || scope == NULL || !PyUnicode_CheckExact(scope))
        return DECLINE();
    /* classify's first branch: no other convention's marker key, scope or name prefix. */
    if (same_text(scope, bound.pydantic_ai_scope)) return DECLINE();
    Py_ssize_t prefix = PyUnicode_GET_LENGTH(bound.ai_prefix);
    if (PyUnicode_GET_LENGTH(name) >= prefix) {
        Py_ssize_t at = PyUnicode_Tailmatch(name, bound.ai_prefix, 0, prefix, -1);
        if (at < 0) return NULL;
        if (at) return DECLINE();
    }
    PyObject *found[K_COUNT] = {0};
    int plain = find_keys(attrs, found);
    if (plain <= 0) return plain < 0 ? NULL : DECLINE();
    PyObject *op = found[K_OPERATION];
    if (op == NULL) {
        /* No convention recognises a span with no marker and no GenAI operation or name (an
         * HTTP span, say): classify answers None. */
        int named = genai_name(name);
        if (named < 0) return NULL;
        return named ? DECLINE() : Py_NewRef(Py_None);
    }
    if (!PyUnicode_CheckExact(op)) return DECLINE();
    if (same_text(op, bound.execute_tool)) return read_tool(span, found, limit, out);
    if (same_text(op, bound.invoke_agent)) return read_agent(found, out);
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(bound.model_ops); n++)
        if (same_text(op, PyTuple_GET_ITEM(bound.model_ops, n))) return read_model(found, out);
    return DECLINE();
}

PyObject *tracescore_read_plain_genai(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "read_plain_genai(span, max_value_chars)");
        return NULL;
    }
    if (bound.fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "read_plain_genai before bind_genai()");
        return NULL;
    }
    return tracescore_read_plain(args[0], args[1], NULL);
}
