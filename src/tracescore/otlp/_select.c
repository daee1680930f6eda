/* select_calls (scorers/base.py) natively, with the same one-run memo: the tool calls of a
 * trajectory that count under a call policy.
 *
 * Every check of a scenario and then the run's metrics ask about the same run one after
 * another; as a Python function each question cost a call frame and a comprehension (about a
 * twentieth of scoring a run live). Here the check kernels (_checks.c) ask without leaving C,
 * and Python callers get the same function as `scorers.base.select_calls`.
 *
 * A trajectory that is not a plain Trajectory with a tuple of steps is answered by the Python
 * twin (`python_select_calls`, with its own memo): the answers are the step objects
 * themselves, so both memos hand out calls of the same identity. */
#include "_scan.h"

static struct {
    PyObject *trajectory_type, *call_type, *agent_type, *python, *subagent_calls;
    Py_ssize_t steps, status;
    PyObject *ok, *clean, *attempted;
    /* The last run asked about (owned) and its answers per slot, 2 * subagents + clean. */
    PyObject *run, *slots[4];
} sel;

/* bind_select(Trajectory, ToolCall, AgentStep, python_select_calls, subagent_calls): once.
 * subagent_calls(trajectory): its calls with sub-agents' inline (`Trajectory.tool_calls`). */
PyObject *tracescore_bind_select(PyObject *self, PyObject *args) {
    PyObject *trajectory, *call, *agent, *python, *subagent_calls;
    if (!PyArg_ParseTuple(args, "O!O!O!OO:bind_select", &PyType_Type, &trajectory, &PyType_Type,
                          &call, &PyType_Type, &agent, &python, &subagent_calls))
        return NULL;
    Py_ssize_t steps = tracescore_slot_offset(trajectory, "steps");
    Py_ssize_t status = tracescore_slot_offset(call, "status");
    if (steps < 0 || status < 0) return NULL;
    if (sel.ok == NULL) {
        sel.ok = PyUnicode_InternFromString("ok");
        sel.clean = PyUnicode_InternFromString("clean");
        sel.attempted = PyUnicode_InternFromString("attempted");
        if (sel.ok == NULL || sel.clean == NULL || sel.attempted == NULL) return NULL;
    }
    sel.steps = steps;
    sel.status = status;
    Py_XSETREF(sel.trajectory_type, Py_NewRef(trajectory));
    Py_XSETREF(sel.call_type, Py_NewRef(call));
    Py_XSETREF(sel.agent_type, Py_NewRef(agent));
    Py_XSETREF(sel.python, Py_NewRef(python));
    Py_XSETREF(sel.subagent_calls, Py_NewRef(subagent_calls));
    Py_CLEAR(sel.run);
    for (int n = 0; n < 4; n++) Py_CLEAR(sel.slots[n]);
    Py_RETURN_NONE;
}

/* The steps of `steps` (a tuple) of exactly `type`, as a tuple. */
static PyObject *of_type(PyObject *steps, PyObject *type) {
    Py_ssize_t count = PyTuple_GET_SIZE(steps), kept = 0;
    PyObject *out = PyTuple_New(count);
    if (out == NULL) return NULL;
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *step = PyTuple_GET_ITEM(steps, n);
        if ((PyObject *)Py_TYPE(step) == type) PyTuple_SET_ITEM(out, kept++, Py_NewRef(step));
    }
    if (kept < count && _PyTuple_Resize(&out, kept) < 0) return NULL;
    return out;
}

/* The calls of `every` (a tuple) whose status == "ok", as a tuple. */
static PyObject *clean_of(PyObject *every) {
    Py_ssize_t count = PyTuple_GET_SIZE(every), kept = 0;
    PyObject *out = PyTuple_New(count);
    if (out == NULL) return NULL;
    for (Py_ssize_t n = 0; n < count; n++) {
        PyObject *call = PyTuple_GET_ITEM(every, n), *status = SLOT(call, sel.status);
        if (status == NULL) {
            PyErr_SetString(PyExc_AttributeError, "status");
            Py_DECREF(out);
            return NULL;
        }
        int ok = status == sel.ok ? 1 : PyObject_RichCompareBool(status, sel.ok, Py_EQ);
        if (ok < 0) {
            Py_DECREF(out);
            return NULL;
        }
        if (ok) PyTuple_SET_ITEM(out, kept++, Py_NewRef(call));
    }
    if (kept < count && _PyTuple_Resize(&out, kept) < 0) return NULL;
    return out;
}

/* The answer for `slot` of `run` (a plain Trajectory whose steps are a tuple), computed from
 * the slots it derives from as Python's does. New reference. */
static PyObject *answer(PyObject *run, PyObject *steps, int slot) {
    if (sel.slots[slot] != NULL) return Py_NewRef(sel.slots[slot]);
    PyObject *calls;
    if (slot & 1) { /* clean: the attempted calls that are ok */
        PyObject *every = answer(run, steps, slot - 1);
        if (every == NULL) return NULL;
        calls = PyTuple_CheckExact(every) ? clean_of(every) : NULL;
        if (calls == NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "tool calls must be a tuple");
        Py_DECREF(every);
    } else if (slot == 0) {
        calls = of_type(steps, sel.call_type);
    } else { /* attempted with sub-agents: the same calls when there is no sub-agent */
        int nested = 0;
        for (Py_ssize_t n = 0; !nested && n < PyTuple_GET_SIZE(steps); n++)
            nested = (PyObject *)Py_TYPE(PyTuple_GET_ITEM(steps, n)) == sel.agent_type;
        calls = nested ? PyObject_CallOneArg(sel.subagent_calls, run) : answer(run, steps, 0);
    }
    /* Kept only while `run` is still the memo's (a callback may have asked about another). */
    if (calls != NULL && sel.run == run) Py_XSETREF(sel.slots[slot], Py_NewRef(calls));
    return calls;
}

/* `select_calls(trajectory, policy, include_subagents)` (new reference), or NULL. */
PyObject *tracescore_select_calls(PyObject *trajectory, PyObject *policy, int subagents) {
    if (sel.python == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "select_calls before bind_select()");
        return NULL;
    }
    PyObject *steps = (PyObject *)Py_TYPE(trajectory) == sel.trajectory_type
                          ? SLOT(trajectory, sel.steps)
                          : NULL;
    if (steps == NULL || !PyTuple_CheckExact(steps)) {
        PyObject *args[3] = {trajectory, policy, subagents ? Py_True : Py_False};
        return PyObject_Vectorcall(sel.python, args, 3, NULL);
    }
    int clean = policy == sel.clean ? 1
                : policy == sel.attempted || !PyUnicode_Check(policy)
                    ? 0
                    : PyUnicode_Compare(policy, sel.clean) == 0;
    if (sel.run != trajectory) {
        Py_XSETREF(sel.run, Py_NewRef(trajectory));
        for (int n = 0; n < 4; n++) Py_CLEAR(sel.slots[n]);
    }
    Py_INCREF(trajectory); /* held while the answer is made, whatever the memo then holds */
    PyObject *calls = answer(trajectory, steps, 2 * subagents + clean);
    Py_DECREF(trajectory);
    return calls;
}

static const char *select_names[3] = {"trajectory", "policy", "include_subagents"};

/* select_calls(trajectory, policy, include_subagents=False), as Python calls it. */
PyObject *tracescore_select_calls_py(PyObject *self, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *given[3] = {NULL, NULL, Py_False};
    if (nargs > 3) {
        PyErr_Format(PyExc_TypeError, "select_calls takes at most 3 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    for (Py_ssize_t n = 0; n < nargs; n++) given[n] = args[n];
    Py_ssize_t keywords = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < keywords; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int at = -1;
        for (int n = 0; n < 3 && at < 0; n++)
            if (PyUnicode_CompareWithASCIIString(name, select_names[n]) == 0) at = n;
        if (at < 0 || at < nargs) {
            PyErr_Format(PyExc_TypeError, "select_calls got an unexpected or repeated argument %R",
                         name);
            return NULL;
        }
        given[at] = args[nargs + k];
    }
    if (given[0] == NULL || given[1] == NULL) {
        PyErr_SetString(PyExc_TypeError, "select_calls needs a trajectory and a policy");
        return NULL;
    }
    int subagents = PyObject_IsTrue(given[2]);
    if (subagents < 0) return NULL;
    return tracescore_select_calls(given[0], given[1], subagents);
}
