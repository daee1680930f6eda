/* Counting a scored run into the service's metrics (export/metrics.py, `Telemetry.record_run`)
 * in one call, when every series it touches is already known.
 *
 * Recording a run was about a twentieth of what `serve` spends per span in process, nearly all
 * of it the Python of looking series up in memos and appending to pending lists. Here the
 * same memos are read and the same lists appended to, in the same order; anything else (a
 * series not made yet, a score that failed, an unexpected type) changes nothing and is left
 * to the Python path, which makes the series (folding values past the cardinality cap) and
 * records the run. The caller holds the Telemetry lock. */
#include "_scan.h"

static struct {
    Py_ssize_t trajectory, scenario, scores, verdict, sampled; /* RunResult */
    Py_ssize_t agent;                                          /* Trajectory */
    Py_ssize_t name, value, error;                             /* Score */
    Py_ssize_t pending;                                        /* _ScoreSeries */
    Py_ssize_t call_name, call_status;                         /* ToolCall */
    PyObject *attempted, *one;
    int bound;
} mb;

/* State tuple items (`Telemetry._native_state`). */
enum { S_RUN_KEYS, S_COUNTS, S_SCORE_KEYS, S_DIRTY, S_NAMES, S_STATUSES, S_COUNT };

/* bind_metrics(RunResult, Trajectory, Score, _ScoreSeries, ToolCall): once. */
PyObject *tracescore_bind_metrics(PyObject *self, PyObject *args) {
    PyObject *result, *trajectory, *score, *series, *call;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!:bind_metrics", &PyType_Type, &result, &PyType_Type,
                          &trajectory, &PyType_Type, &score, &PyType_Type, &series, &PyType_Type,
                          &call))
        return NULL;
    struct {
        PyObject *type;
        const char *name;
        Py_ssize_t *offset;
    } slots[] = {
        {result, "trajectory", &mb.trajectory}, {result, "scenario", &mb.scenario},
        {result, "scores", &mb.scores},         {result, "verdict", &mb.verdict},
        {result, "sampled", &mb.sampled},       {trajectory, "agent", &mb.agent},
        {score, "name", &mb.name},              {score, "value", &mb.value},
        {score, "error", &mb.error},            {series, "pending", &mb.pending},
        {call, "name", &mb.call_name},          {call, "status", &mb.call_status},
    };
    for (size_t n = 0; n < sizeof slots / sizeof slots[0]; n++)
        if ((*slots[n].offset = tracescore_slot_offset(slots[n].type, slots[n].name)) < 0)
            return NULL;
    if (mb.attempted == NULL && (mb.attempted = PyUnicode_InternFromString("attempted")) == NULL)
        return NULL;
    if (mb.one == NULL && (mb.one = PyLong_FromLong(1)) == NULL) return NULL;
    mb.bound = 1;
    Py_RETURN_NONE;
}

/* The value of `key` in `dict` (borrowed), or NULL, with an error set only on failure. */
static PyObject *lookup(PyObject *dict, PyObject *key) {
    return PyDict_CheckExact(dict) ? PyDict_GetItemWithError(dict, key) : NULL;
}

/* A tuple of the 2 or 3 `items` (borrowed), or NULL. */
static PyObject *key_of(PyObject *a, PyObject *b, PyObject *c) {
    return c == NULL ? PyTuple_Pack(2, a, b) : PyTuple_Pack(3, a, b, c);
}

/* record_run(state, result) -> the number of score values it left waiting in their series,
 * or None when the Python path must record the run (nothing was changed). A run that was not
 * scored (no scenario, or not sampled) is not counted: 0. */
PyObject *tracescore_record_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != S_COUNT ||
        !mb.bound) {
        PyErr_SetString(PyExc_TypeError, "record_run(state, result) after bind_metrics()");
        return NULL;
    }
    PyObject *state = args[0], *result = args[1];
    PyObject *scenario = SLOT(result, mb.scenario), *sampled = SLOT(result, mb.sampled);
    PyObject *trajectory = SLOT(result, mb.trajectory), *scores = SLOT(result, mb.scores);
    PyObject *verdict = SLOT(result, mb.verdict);
    if (scenario == NULL || sampled == NULL || trajectory == NULL || scores == NULL ||
        verdict == NULL || !PyTuple_CheckExact(scores) || !PyBool_Check(sampled))
        Py_RETURN_NONE;
    if (scenario == Py_None || sampled == Py_False) return PyLong_FromLong(0);
    PyObject *agent = SLOT(trajectory, mb.agent);
    if (agent == NULL) Py_RETURN_NONE;
    PyObject *counts = PyTuple_GET_ITEM(state, S_COUNTS), *dirty = PyTuple_GET_ITEM(state, S_DIRTY);
    PyObject *names = PyTuple_GET_ITEM(state, S_NAMES);
    PyObject *statuses = PyTuple_GET_ITEM(state, S_STATUSES);
    if (!PyDict_CheckExact(counts) || !PyList_CheckExact(dirty) || !PyList_CheckExact(names) ||
        !PyList_CheckExact(statuses))
        Py_RETURN_NONE;
    /* Look everything up first: a miss must leave every memo and list as it was. */
    PyObject *memo = key_of(verdict, scenario, agent), *by_name = NULL, *calls = NULL;
    PyObject *run = memo ? lookup(PyTuple_GET_ITEM(state, S_RUN_KEYS), memo) : NULL;
    Py_XDECREF(memo);
    if (run == NULL || !PyTuple_CheckExact(run) || PyTuple_GET_SIZE(run) != 3)
        goto miss;
    PyObject *pair = key_of(PyTuple_GET_ITEM(run, 1), PyTuple_GET_ITEM(run, 2), NULL);
    by_name = pair ? lookup(PyTuple_GET_ITEM(state, S_SCORE_KEYS), pair) : NULL;
    Py_XDECREF(pair);
    if (by_name == NULL || !PyDict_CheckExact(by_name)) goto miss;
    Py_ssize_t count = PyTuple_GET_SIZE(scores), values = 0;
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *score = PyTuple_GET_ITEM(scores, n);
        PyObject *name = SLOT(score, mb.name), *value = SLOT(score, mb.value);
        PyObject *error = SLOT(score, mb.error);
        if (name == NULL || value == NULL || error == NULL) goto miss;
        if (value == Py_None) {
            if (error != Py_None) goto miss; /* a failed scorer: counted by Python */
            continue;
        }
        PyObject *series = lookup(by_name, name);
        PyObject *pending = series ? SLOT(series, mb.pending) : NULL;
        if (pending == NULL || !PyList_CheckExact(pending)) goto miss;
        values++;
    }
    calls = tracescore_select_calls(trajectory, mb.attempted, 1);
    if (calls == NULL || !PyTuple_CheckExact(calls)) goto miss;
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(calls); n++) {
        PyObject *call = PyTuple_GET_ITEM(calls, n);
        if (SLOT(call, mb.call_name) == NULL || SLOT(call, mb.call_status) == NULL) goto miss;
    }
    /* Then record, as the Python path does: the run, its scores, its calls. */
    PyObject *run_key = PyTuple_GET_ITEM(run, 0);
    PyObject *before = PyDict_GetItemWithError(counts, run_key);
    if (before == NULL && PyErr_Occurred()) goto fail;
    PyObject *after = before == NULL ? PyLong_FromLong(1) : PyNumber_Add(before, mb.one);
    int stored = after == NULL ? -1 : PyDict_SetItem(counts, run_key, after);
    Py_XDECREF(after);
    if (stored < 0) goto fail;
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *score = PyTuple_GET_ITEM(scores, n), *value = SLOT(score, mb.value);
        if (value == Py_None) continue;
        PyObject *series = PyDict_GetItemWithError(by_name, SLOT(score, mb.name));
        PyObject *pending = series ? SLOT(series, mb.pending) : NULL;
        if (pending == NULL) goto fail; /* found a moment ago: only a failure loses it */
        if ((PyList_GET_SIZE(pending) == 0 && PyList_Append(dirty, series) < 0) ||
            PyList_Append(pending, value) < 0)
            goto fail;
    }
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(calls); n++) {
        PyObject *call = PyTuple_GET_ITEM(calls, n);
        if (PyList_Append(names, SLOT(call, mb.call_name)) < 0 ||
            PyList_Append(statuses, SLOT(call, mb.call_status)) < 0)
            goto fail;
    }
    Py_DECREF(calls);
    return PyLong_FromSsize_t(values);
miss: /* the Python path looks again, and raises what it must */
    Py_XDECREF(calls);
    PyErr_Clear();
    Py_RETURN_NONE;
fail:
    Py_XDECREF(calls);
    return NULL;
}
