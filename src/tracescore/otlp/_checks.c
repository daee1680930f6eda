/* The commonest checks of a run's tool calls, scored in one call each (scorers/checks.py):
 * `max_tool_calls`, `no_tool_errors` (without `compat: mastra`) and `called_tool`.
 *
 * A scenario's plan scores every run with each of its scorers; for these checks that was
 * about an eighth of what the service spends per span in process, most of it the Python of
 * comprehensions over the calls, the explanation and building the Score (0.7 us alone). Here
 * the calls are chosen by `select_calls` (_select.c, with its memo), then counted, and
 * the explanation, details and Score made, with the values `_Check.bound_score` gives.
 * Anything unusual (an error, a value of an unexpected type) is left to the Python scorer,
 * which every kernel is handed: the Scores are exactly its (tests compare on fixture and
 * generated runs). */
#include "_scan.h"

enum { F_NAME, F_TYPE, F_VALUE, F_PASSED, F_EXPLANATION, F_DIGEST, F_LABEL, F_DETAILS, F_ERROR,
       F_COUNT };
static const char *score_fields[F_COUNT] = {"name",        "type",   "value", "passed",
                                            "explanation", "digest", "label", "details",
                                            "error"};

/* The parameters tuple of a kernel (`_native_checks.native_score`), then its own arguments. */
enum { P_KERNEL, P_POLICY, P_SUBAGENTS, P_NAME, P_TYPE, P_DIGEST, P_PASSES, P_FAILS,
       P_PASS_LABEL, P_FAIL_LABEL, P_FALLBACK, P_ARG1, P_ARG2, P_COUNT };
enum { K_MAX_TOOL_CALLS = 1, K_NO_TOOL_ERRORS = 2, K_CALLED_TOOL = 3 };

/* The keys of the checks' details, interned once: Py_BuildValue made and hashed new str keys
 * for every Score. */
enum { D_COUNT, D_MAX, D_ERROR_COUNT, D_TOTAL_CALLS, D_ERRORED, D_PAUSED, D_TOOL,
       D_EXPECTED_TIMES, D_ACTUAL_COUNT, D_KEYS };
static const char *detail_keys[D_KEYS] = {"count",   "max",    "error_count",    "total_calls",
                                          "errored", "paused", "tool",           "expected_times",
                                          "actual_count"};

static struct {
    PyObject *score_type;
    Py_ssize_t score[F_COUNT], call_name, call_status;
    PyObject *one, *zero, *none_text, *separator, *error, *paused, *attempted;
    PyObject *keys[D_KEYS];
} cb;

/* A details dict of `count` (key, value) pairs: keys D_*, values stolen (none NULL on entry
 * unless the dict is not made: then every value is released). */
static PyObject *details_of(int count, const int *keys, PyObject **values) {
    PyObject *details = PyDict_New();
    for (int n = 0; n < count; n++) {
        if (details != NULL && (values[n] == NULL ||
                                PyDict_SetItem(details, cb.keys[keys[n]], values[n]) < 0))
            Py_CLEAR(details);
        Py_XDECREF(values[n]);
    }
    return details;
}

/* bind_checks(Score, ToolCall): once, after bind_select and before check_score. */
PyObject *tracescore_bind_checks(PyObject *self, PyObject *args) {
    PyObject *score_type, *call_type;
    if (!PyArg_ParseTuple(args, "O!O!:bind_checks", &PyType_Type, &score_type, &PyType_Type,
                          &call_type))
        return NULL;
    for (int n = 0; n < F_COUNT; n++)
        if ((cb.score[n] = tracescore_slot_offset(score_type, score_fields[n])) < 0)
            return NULL;
    if ((cb.call_name = tracescore_slot_offset(call_type, "name")) < 0 ||
        (cb.call_status = tracescore_slot_offset(call_type, "status")) < 0)
        return NULL;
    if (cb.one == NULL) {
        cb.one = PyFloat_FromDouble(1.0);
        cb.zero = PyFloat_FromDouble(0.0);
        cb.none_text = PyUnicode_InternFromString("none");
        cb.separator = PyUnicode_InternFromString(", ");
        cb.error = PyUnicode_InternFromString("error");
        cb.paused = PyUnicode_InternFromString("paused");
        cb.attempted = PyUnicode_InternFromString("attempted");
        if (!cb.one || !cb.zero || !cb.none_text || !cb.separator || !cb.error || !cb.paused ||
            !cb.attempted)
            return NULL;
        for (int n = 0; n < D_KEYS; n++)
            if ((cb.keys[n] = PyUnicode_InternFromString(detail_keys[n])) == NULL) return NULL;
    }
    Py_XSETREF(cb.score_type, Py_NewRef(score_type));
    Py_RETURN_NONE;
}

/* The Score `_Check.bound_binary_score` makes, its slots filled directly (a value of 0 or 1
 * needs none of __post_init__'s checks); explanation and details are stolen. */
static PyObject *binary_score(PyObject *params, int passed, PyObject *explanation,
                              PyObject *details) {
    PyTypeObject *type = (PyTypeObject *)cb.score_type;
    PyObject *score = explanation && details ? type->tp_alloc(type, 0) : NULL;
    if (score == NULL) {
        Py_XDECREF(explanation);
        Py_XDECREF(details);
        return NULL;
    }
    PyObject *values[F_COUNT] = {
        Py_NewRef(PyTuple_GET_ITEM(params, P_NAME)),
        Py_NewRef(PyTuple_GET_ITEM(params, P_TYPE)),
        Py_NewRef(passed ? cb.one : cb.zero),
        Py_NewRef(PyTuple_GET_ITEM(params, passed ? P_PASSES : P_FAILS)),
        explanation,
        Py_NewRef(PyTuple_GET_ITEM(params, P_DIGEST)),
        Py_NewRef(PyTuple_GET_ITEM(params, passed ? P_PASS_LABEL : P_FAIL_LABEL)),
        details,
        Py_NewRef(Py_None),
    };
    for (int n = 0; n < F_COUNT; n++) SLOT(score, cb.score[n]) = values[n];
    return score;
}

/* The names of `calls` (a list or tuple) as a new list: `[c.name for c in calls]`. */
static PyObject *name_list(PyObject *calls) {
    Py_ssize_t count = PySequence_Fast_GET_SIZE(calls);
    PyObject *list = PyList_New(count);
    if (list == NULL) return NULL;
    for (Py_ssize_t n = 0; n < count; n++)
        PyList_SET_ITEM(list, n, Py_NewRef(SLOT(PySequence_Fast_GET_ITEM(calls, n), cb.call_name)));
    return list;
}

/* `names`: the names in `listed` (a list of str) joined by ", ", or "none". */
static PyObject *joined_names(PyObject *listed) {
    if (PyList_GET_SIZE(listed) == 0) return Py_NewRef(cb.none_text);
    PyObject *joined = PyUnicode_Join(cb.separator, listed);
    if (joined != NULL && PyUnicode_GET_LENGTH(joined) == 0) /* `... or "none"` */
        Py_SETREF(joined, Py_NewRef(cb.none_text));
    return joined;
}

/* `names(calls)` (calls: a list or tuple). */
static PyObject *names(PyObject *calls) {
    PyObject *listed = name_list(calls);
    if (listed == NULL) return NULL;
    PyObject *joined = joined_names(listed);
    Py_DECREF(listed);
    return joined;
}

static PyObject *max_tool_calls(PyObject *params, PyObject *calls) {
    PyObject *most = PyTuple_GET_ITEM(params, P_ARG1);
    Py_ssize_t count = PySequence_Fast_GET_SIZE(calls), limit = PyLong_AsSsize_t(most);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    PyObject *listed = names(calls);
    if (listed == NULL) return NULL;
    PyObject *explanation = PyUnicode_FromFormat("%zd tool call(s), at most %S allowed: %U",
                                                 count, most, listed);
    Py_DECREF(listed);
    PyObject *values[2] = {PyLong_FromSsize_t(count), Py_NewRef(most)};
    PyObject *details = details_of(2, (const int[]){D_COUNT, D_MAX}, values);
    return binary_score(params, count <= limit, explanation, details);
}

static PyObject *no_tool_errors(PyObject *params, PyObject *calls) {
    PyObject *errored = PyList_New(0), *paused = PyList_New(0), *out = NULL;
    PyObject *explanation = NULL, *errored_names = NULL, *paused_names = NULL;
    if (errored == NULL || paused == NULL) goto done;
    for (Py_ssize_t n = 0; n < PySequence_Fast_GET_SIZE(calls); n++) {
        PyObject *call = PySequence_Fast_GET_ITEM(calls, n), *status = SLOT(call, cb.call_status);
        int is_error = PyObject_RichCompareBool(status, cb.error, Py_EQ);
        int is_paused = is_error ? 0 : PyObject_RichCompareBool(status, cb.paused, Py_EQ);
        if (is_error < 0 || is_paused < 0) goto done;
        if ((is_error && PyList_Append(errored, call) < 0) ||
            (is_paused && PyList_Append(paused, call) < 0))
            goto done;
    }
    /* Each list of names is made once: joined for the explanation, kept for the details. */
    if ((errored_names = name_list(errored)) == NULL || (paused_names = name_list(paused)) == NULL)
        goto done;
    Py_ssize_t failed = PyList_GET_SIZE(errored), total = PySequence_Fast_GET_SIZE(calls);
    if (failed) {
        PyObject *listed = joined_names(errored_names);
        if (listed == NULL) goto done;
        explanation = PyUnicode_FromFormat("%zd of %zd tool call(s) failed: %U", failed, total,
                                           listed);
        Py_DECREF(listed);
    } else {
        explanation = PyUnicode_FromFormat("none of %zd tool call(s) failed", total);
    }
    if (explanation == NULL) goto done;
    if (PyList_GET_SIZE(paused)) {
        PyObject *listed = joined_names(paused_names);
        if (listed == NULL) goto done;
        PyObject *more = PyUnicode_FromFormat("%U; paused (not counted as errors): %U",
                                              explanation, listed);
        Py_DECREF(listed);
        Py_SETREF(explanation, more);
        if (explanation == NULL) goto done;
    }
    PyObject *values[4] = {PyLong_FromSsize_t(failed), PyLong_FromSsize_t(total),
                           Py_NewRef(errored_names), Py_NewRef(paused_names)};
    PyObject *details = details_of(
        4, (const int[]){D_ERROR_COUNT, D_TOTAL_CALLS, D_ERRORED, D_PAUSED}, values);
    out = binary_score(params, failed == 0, explanation, details);
    explanation = NULL; /* stolen */
done:
    Py_XDECREF(errored);
    Py_XDECREF(paused);
    Py_XDECREF(explanation);
    Py_XDECREF(errored_names);
    Py_XDECREF(paused_names);
    return out;
}

/* `uncounted_note`: "" when every attempted call counted, else "not counted (calls: clean):
 * " and the calls left out, each "name (status)". `counted` is the clean calls, which the memo
 * made of the attempted ones (a subsequence of them); NULL, with no error set, for anything
 * else, or a name or status that is not a str: the Python scorer then says it. */
static PyObject *uncounted_note(PyObject *params, PyObject *trajectory, PyObject *counted) {
    int subagents = PyObject_IsTrue(PyTuple_GET_ITEM(params, P_SUBAGENTS));
    PyObject *every = subagents < 0 ? NULL
                                    : tracescore_select_calls(trajectory, cb.attempted, subagents);
    if (every == NULL) return NULL;
    PyObject *left = PyTuple_CheckExact(every) ? PyList_New(0) : NULL, *note = NULL;
    Py_ssize_t total = left ? PyTuple_GET_SIZE(every) : 0, kept = 0;
    Py_ssize_t wanted = PySequence_Fast_GET_SIZE(counted);
    if (left == NULL || total == wanted) {
        note = left ? PyUnicode_New(0, 0) : NULL;
        goto done;
    }
    for (Py_ssize_t n = 0; n < total; n++) {
        PyObject *call = PyTuple_GET_ITEM(every, n);
        if (kept < wanted && PySequence_Fast_GET_ITEM(counted, kept) == call) {
            kept++;
            continue;
        }
        PyObject *name = SLOT(call, cb.call_name), *status = SLOT(call, cb.call_status);
        if (name == NULL || status == NULL || !PyUnicode_CheckExact(name) ||
            !PyUnicode_CheckExact(status))
            goto done;
        PyObject *item = PyUnicode_FromFormat("%U (%U)", name, status);
        int appended = item == NULL ? -1 : PyList_Append(left, item);
        Py_XDECREF(item);
        if (appended < 0) goto done;
    }
    if (kept == wanted) {
        PyObject *joined = PyUnicode_Join(cb.separator, left);
        note = joined == NULL ? NULL
                              : PyUnicode_FromFormat("not counted (calls: clean): %U", joined);
        Py_XDECREF(joined);
    }
done:
    Py_XDECREF(left);
    Py_DECREF(every);
    return note;
}

static PyObject *called_tool(PyObject *params, PyObject *trajectory, PyObject *calls) {
    PyObject *tool = PyTuple_GET_ITEM(params, P_ARG1), *times = PyTuple_GET_ITEM(params, P_ARG2);
    Py_ssize_t count = 0, wanted = PyLong_AsSsize_t(times);
    if (wanted == -1 && PyErr_Occurred()) return NULL;
    for (Py_ssize_t n = 0; n < PySequence_Fast_GET_SIZE(calls); n++) {
        int same = PyObject_RichCompareBool(SLOT(PySequence_Fast_GET_ITEM(calls, n), cb.call_name), tool,
                                            Py_EQ);
        if (same < 0) return NULL;
        count += same;
    }
    int passed = count >= wanted;
    int attempted = PyObject_RichCompareBool(PyTuple_GET_ITEM(params, P_POLICY), cb.attempted,
                                             Py_EQ);
    if (attempted < 0) return NULL;
    PyObject *note = passed || attempted ? PyUnicode_New(0, 0)
                                         : uncounted_note(params, trajectory, calls);
    if (note == NULL) return NULL;
    PyObject *explanation = PyUnicode_FromFormat(
        PyUnicode_GET_LENGTH(note) ? "'%U' was called %zd time(s); at least %S expected; %U"
                                   : "'%U' was called %zd time(s); at least %S expected",
        tool, count, times, note);
    Py_DECREF(note);
    PyObject *values[3] = {Py_NewRef(tool), Py_NewRef(times), PyLong_FromSsize_t(count)};
    PyObject *details =
        details_of(3, (const int[]){D_TOOL, D_EXPECTED_TIMES, D_ACTUAL_COUNT}, values);
    return binary_score(params, passed, explanation, details);
}

/* check_score(params, trajectory) -> Score: the kernel named by params; the Python scorer
 * (params' fallback) for whatever a kernel leaves to it, errors included. */
PyObject *tracescore_check_score(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != P_COUNT) {
        PyErr_SetString(PyExc_TypeError, "check_score(params, trajectory)");
        return NULL;
    }
    PyObject *params = args[0], *trajectory = args[1];
    PyObject *fallback = PyTuple_GET_ITEM(params, P_FALLBACK);
    if (cb.score_type == NULL) return PyObject_CallOneArg(fallback, trajectory);
    int subagents = PyObject_IsTrue(PyTuple_GET_ITEM(params, P_SUBAGENTS));
    PyObject *selected = subagents < 0 ? NULL
                         : tracescore_select_calls(trajectory, PyTuple_GET_ITEM(params, P_POLICY),
                                                   subagents);
    /* A tuple (what select_calls returns) stays itself: no copy. */
    PyObject *calls = selected == NULL ? NULL : PySequence_Fast(selected, "calls");
    Py_XDECREF(selected);
    PyObject *score = NULL;
    if (calls != NULL) {
        long kernel = PyLong_AsLong(PyTuple_GET_ITEM(params, P_KERNEL));
        if (kernel == K_MAX_TOOL_CALLS) score = max_tool_calls(params, calls);
        else if (kernel == K_NO_TOOL_ERRORS) score = no_tool_errors(params, calls);
        else if (kernel == K_CALLED_TOOL) score = called_tool(params, trajectory, calls);
        Py_DECREF(calls);
    }
    if (score != NULL) return score;
    PyErr_Clear(); /* the Python scorer scores it again, failing the way it fails */
    return PyObject_CallOneArg(fallback, trajectory);
}
