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
 *            kind)) -> flat_run: once, first (_genai_bind.c).
 * read_plain_genai(span, max_value_chars) -> SpanView | None | FALLBACK: `classify(span)` itself
 *   when it answers (it checks no other convention marks the span, as classify's first branch
 *   does), else FALLBACK.
 * flat_run(ordered, max_value_chars, output_tool_names, include_output_tools): a trace that is
 *   one flat run of plain spans, checked, read and made into steps in one call (_flat.c).
 */
#include "_genai.h"

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
 * values `attrs` were found in one pass over the attributes (`tracescore_find_keys`). */
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
    int plain = tracescore_find_keys(attrs, found);
    if (plain <= 0) return plain < 0 ? NULL : DECLINE();
    PyObject *op = found[K_OPERATION];
    if (op == NULL) {
        /* No convention recognises a span with no marker and no GenAI operation or name (an
         * HTTP span, say): classify answers None. */
        int named = tracescore_genai_name(name);
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
