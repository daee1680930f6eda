/* What the GenAI span reader (_genai.c), its binding (_genai_bind.c) and the flat-run builder
 * (_flat.c) share: the attribute keys and class fields they know, and what bind_genai bound
 * (see _genai.c). */
#ifndef TRACESCORE_GENAI_H
#define TRACESCORE_GENAI_H
#include "_scan.h"

/* The attribute keys read, in the order bind_genai receives them (semconv names them). */
enum {
    K_OPERATION, K_TOOL_NAME, K_CALL_ID, K_ARGUMENTS, K_RESULT, K_ERROR_TYPE,
    K_INPUT_MESSAGES, K_OUTPUT_MESSAGES, K_TOOL_DEFINITIONS, K_INPUT_TOKENS, K_OUTPUT_TOKENS,
    K_PROMPT_TOKENS, K_COMPLETION_TOKENS, K_RESPONSE_MODEL, K_REQUEST_MODEL, K_ERROR_MESSAGE,
    K_AGENT_NAME, K_COUNT
};

/* SpanView's fields, in declaration order (bind_genai checks the class has exactly these). */
enum {
    V_ROLE, V_CONVENTION, V_TOOL_NAME, V_CALL_ID, V_ERROR, V_ERROR_TYPE, V_ERROR_MESSAGE,
    V_MODEL, V_INPUT_TOKENS, V_OUTPUT_TOKENS, V_OUTPUT, V_AGENT_NAME, V_INPUT, V_TOOLS,
    V_ARGUMENTS, V_RESULT, V_PAUSE_REASON, V_OUTPUT_TOOL, V_REQUESTS, V_RESPONSES,
    V_OUTPUT_TOOL_NAMES, V_WARNINGS, V_FIELDS
};

/* ToolCall's and ModelCall's fields, in declaration order (bind_genai checks). */
enum {
    C_NAME, C_CALL_ID, C_ARGUMENTS, C_RESULT, C_STATUS, C_ERROR_TYPE, C_ERROR_MESSAGE,
    C_PAUSE_REASON, C_START_NS, C_END_NS, C_SPAN_ID, C_AGENT, C_FIELDS
};
enum { M_MODEL, M_INPUT_TOKENS, M_OUTPUT_TOKENS, M_START_NS, M_END_NS, M_SPAN_ID, M_FIELDS };

typedef struct {
    PyObject *record_type, *view_type; /* classes */
    /* SpanRecord slot offsets */
    Py_ssize_t attributes, events, status_code, status_message, name, scope;
    Py_ssize_t span_id, parent_span_id, start_ns, end_ns, kind;
    long max_kind; /* the largest span kind the forest accepts without a warning */
    Py_ssize_t view_offsets[V_FIELDS];
    PyObject *view_defaults; /* tuple, one value per field (role and convention unused) */
    PyObject *keys[K_COUNT];
    PyObject *model_ops; /* tuple of str */
    PyObject *execute_tool, *invoke_agent, *tool_role, *model_role, *agent_role, *convention;
    PyObject *genai_prefixes; /* tuple of str: span names GenAI reads without an operation */
    PyObject *unset, *ok, *error;
    PyObject *deferred, *parse_lenient, *needles, *fallback;
    PyObject *markers, *pydantic_ai_scope, *ai_prefix; /* frozenset, str, str */
    /* the flat run's steps (flat_run) */
    PyObject *tool_call_type, *model_call_type, *status_ok, *status_error;
    Py_ssize_t tool_call_offsets[C_FIELDS], model_call_offsets[M_FIELDS];
} Bound;

/* Set once by bind_genai (_genai_bind.c). */
extern Bound bound;

/* What a reader answers when the span is not one it handles: the caller asks Python. */
#define DECLINE() Py_NewRef(bound.fallback)

static inline int same_text(PyObject *a, PyObject *b) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(a);
    return a == b || (len == PyUnicode_GET_LENGTH(b) && PyUnicode_KIND(a) == PyUnicode_KIND(b) &&
                      memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b),
                             len * PyUnicode_KIND(a)) == 0);
}

/* read_plain_genai once bound (_genai.c): a view, None or FALLBACK (new reference), NULL on
 * error; with `out`, True and the view's field values there instead of a view. */
PyObject *tracescore_read_plain(PyObject *span, PyObject *limit, PyObject **out);
/* _genai_bind.c: a span's attributes read through the key table (see tracescore_find_keys
 * there), and whether a span name is one GenAI reads without an operation (1, 0, -1). */
int tracescore_find_keys(PyObject *attrs, PyObject **found);
int tracescore_genai_name(PyObject *name);
/* A span with its times read, for ordering. */
typedef struct {
    long long start, end;
    PyObject *span, *id; /* borrowed; `id` an exact str */
} Entry;
/* _flat_order.c: the spans of `spans` (a list) in order into `entries` (1, or 0 when one is
 * not a plain SpanRecord), and whether that order is a flat run's forward tree (1, 0). */
int tracescore_in_order(PyObject *spans, Entry *entries);
int tracescore_forward(const Entry *entries, Py_ssize_t count);
/* flat_run, returned by bind_genai (_flat.c). */
extern PyMethodDef tracescore_flat_run_def;

#endif
