/* A scenario's plan scoring one run (scenario_plan.py, `ScenarioPlan.run`): each scorer called in entry
 * order, then the verdict concluded from the scores and the RunResult made, in one call.
 *
 * With the commonest checks scored natively (_checks.c), the Python around them, a
 * comprehension calling each scorer and the loop concluding the verdict, cost as much as the
 * checks themselves. Here the scorers are called as the comprehension calls them, and the
 * verdict is concluded as `ScenarioPlan._conclude` does when every deciding score's value is a float
 * or None; for anything else the scores go to `_conclude` itself (the plan's Python twin,
 * which tests compare with this on generated scores). */
#include "_scan.h"

static struct {
    PyObject *result_type;
    Py_ssize_t result[8]; /* RunResult's fields, in order */
    Py_ssize_t value, passed, error;
    PyObject *failed, *scored, *passed_text;
} pb;

static const char *result_fields[8] = {"trajectory", "scenario", "scores", "gates",
                                       "verdict",    "digest",   "sampled", "skipped"};

/* The plan tuple (`ScenarioPlan._runner`). */
enum { N_SCORERS, N_ENTRIES, N_NAME, N_GATES, N_DIGEST, N_CONCLUDE, N_COUNT };
/* Each entry: (name, decides, gate, min, max); min and max are floats or None. */
enum { E_NAME, E_DECIDES, E_GATE, E_MIN, E_MAX, E_COUNT };

/* bind_plan(RunResult, Score): once, before run_plan. */
PyObject *tracescore_bind_plan(PyObject *self, PyObject *args) {
    PyObject *result, *score;
    if (!PyArg_ParseTuple(args, "O!O!:bind_plan", &PyType_Type, &result, &PyType_Type, &score))
        return NULL;
    for (int n = 0; n < 8; n++)
        if ((pb.result[n] = tracescore_slot_offset(result, result_fields[n])) < 0) return NULL;
    if ((pb.value = tracescore_slot_offset(score, "value")) < 0 ||
        (pb.passed = tracescore_slot_offset(score, "passed")) < 0 ||
        (pb.error = tracescore_slot_offset(score, "error")) < 0)
        return NULL;
    if (pb.failed == NULL) {
        pb.failed = PyUnicode_InternFromString("failed");
        pb.scored = PyUnicode_InternFromString("scored");
        pb.passed_text = PyUnicode_InternFromString("passed");
        if (pb.failed == NULL || pb.scored == NULL || pb.passed_text == NULL) return NULL;
    }
    Py_XSETREF(pb.result_type, Py_NewRef(result));
    Py_RETURN_NONE;
}

/* `Threshold.check` of a float: finite and within the bounds (floats or None). */
static int within(double value, PyObject *low, PyObject *high) {
    if (!isfinite(value)) return 0;
    if (low != Py_None && value < PyFloat_AS_DOUBLE(low)) return 0;
    return !(high != Py_None && value > PyFloat_AS_DOUBLE(high));
}

/* The verdict of `scores` (one per entry, None where an entry did not score) into *verdict
 * (borrowed; NULL: none) and the skipped entries' names into `skipped`. 0, 1 when a value is
 * not one this reads (the Python `_conclude` decides), -1 on error. */
static int conclude(PyObject *entries, PyObject *scores, PyObject *skipped, PyObject **verdict) {
    int gate_failed = 0, threshold_missed = 0, has_result = 0;
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(entries); n++) {
        PyObject *entry = PyTuple_GET_ITEM(entries, n), *score = PyList_GET_ITEM(scores, n);
        if (PyTuple_GET_ITEM(entry, E_DECIDES) != Py_True) continue;
        PyObject *value = score == Py_None ? Py_None : SLOT(score, pb.value);
        PyObject *error = score == Py_None ? Py_None : SLOT(score, pb.error);
        if (value == NULL || error == NULL) return 1;
        if (score == Py_None || (value == Py_None && error == Py_None)) {
            if (PyList_Append(skipped, PyTuple_GET_ITEM(entry, E_NAME)) < 0) return -1;
            continue;
        }
        has_result = 1;
        if (PyTuple_GET_ITEM(entry, E_GATE) == Py_True) {
            PyObject *passed = SLOT(score, pb.passed);
            gate_failed = gate_failed || error != Py_None || passed != Py_True;
        } else if (value == Py_None) {
            threshold_missed = 1;
        } else if (!PyFloat_CheckExact(value)) {
            return 1; /* an int or another number: compared exactly by Python */
        } else if (!within(PyFloat_AS_DOUBLE(value), PyTuple_GET_ITEM(entry, E_MIN),
                           PyTuple_GET_ITEM(entry, E_MAX))) {
            threshold_missed = 1;
        }
    }
    *verdict = !has_result ? NULL
               : gate_failed ? pb.failed
               : threshold_missed ? pb.scored
                                  : pb.passed_text;
    return 0;
}

/* run_plan(plan, trajectory) -> RunResult: `ScenarioPlan.run` with the plan's scorers. */
PyObject *tracescore_run_plan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != N_COUNT ||
        pb.result_type == NULL) {
        PyErr_SetString(PyExc_TypeError, "run_plan(plan, trajectory) after bind_plan()");
        return NULL;
    }
    PyObject *plan = args[0], *trajectory = args[1];
    PyObject *scorers = PyTuple_GET_ITEM(plan, N_SCORERS), *entries = PyTuple_GET_ITEM(plan, N_ENTRIES);
    Py_ssize_t count = PyTuple_GET_SIZE(scorers);
    PyObject *scores = PyList_New(count), *ordered = NULL, *skipped = NULL, *out = NULL;
    if (scores == NULL) return NULL;
    Py_ssize_t made = 0;
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *scorer = PyTuple_GET_ITEM(scorers, n);
        PyObject *score = scorer == Py_None ? Py_NewRef(Py_None)
                                            : PyObject_Vectorcall(scorer, &trajectory, 1, NULL);
        if (score == NULL) goto done;
        PyList_SET_ITEM(scores, n, score);
        made += score != Py_None;
    }
    PyObject *verdict = NULL;
    int odd = (skipped = PyList_New(0)) == NULL ? -1 : conclude(entries, scores, skipped, &verdict);
    if (odd < 0) goto done;
    if (odd) {
        PyObject *call[2] = {trajectory, scores};
        out = PyObject_Vectorcall(PyTuple_GET_ITEM(plan, N_CONCLUDE), call, 2, NULL);
        goto done;
    }
    if ((ordered = PyTuple_New(made)) == NULL) goto done;
    for (Py_ssize_t n = 0, at = 0; n < count; n++) {
        PyObject *score = PyList_GET_ITEM(scores, n);
        if (score != Py_None) PyTuple_SET_ITEM(ordered, at++, Py_NewRef(score));
    }
    PyObject *skipped_tuple = PyList_AsTuple(skipped);
    PyTypeObject *type = (PyTypeObject *)pb.result_type;
    PyObject *result = skipped_tuple ? type->tp_alloc(type, 0) : NULL;
    if (result == NULL) {
        Py_XDECREF(skipped_tuple);
        goto done;
    }
    PyObject *values[8] = {
        Py_NewRef(trajectory),
        Py_NewRef(PyTuple_GET_ITEM(plan, N_NAME)),
        Py_NewRef(ordered),
        Py_NewRef(PyTuple_GET_ITEM(plan, N_GATES)),
        Py_NewRef(verdict ? verdict : Py_None),
        Py_NewRef(PyTuple_GET_ITEM(plan, N_DIGEST)),
        Py_NewRef(Py_True),
        skipped_tuple,
    };
    for (int n = 0; n < 8; n++) SLOT(result, pb.result[n]) = values[n];
    out = result;
done:
    Py_DECREF(scores);
    Py_XDECREF(ordered);
    Py_XDECREF(skipped);
    return out;
}
