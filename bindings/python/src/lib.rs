//! `ctxgate._ctxgate`: the native half of the Python package. It owns the
//! calls into the library and the crossing of the language boundary: an
//! answer in (`bytes`, `str`, or a `dict` serialized here, once, straight
//! from the Python objects), the output and the report out, and every
//! failure raised as the exception class the library's `ctxgate::wire`
//! table names for its kind (the classes live in `ctxgate/_errors.py`),
//! with the error object's fields as attributes. Keyword arguments become
//! a request through `ctxgate::wire::TrimParams`, as `serve`'s params do.
//! A request's report stays a Rust value until the host reads it: most
//! requests' reports are never read, and serializing one was most of what
//! a small request cost here beyond the library's own work. The pure-Python layer
//! (`ctxgate/__init__.py`) checks arguments and wraps results; it holds no
//! logic of trimming.
//!
//! The GIL is released while the library reads, checks, decides, trims and
//! renders (`Python::detach`); only the conversions of Python objects hold
//! it. A `Gate` is frozen: threads share one without a lock of ours (the
//! library's `Gate` is `Send + Sync`). Nothing here prints or logs.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;

use ctxgate::wire::{self, Kind, TrimParams};
use ctxgate::{Error, ErrorKind, Gate as Inner, Limits, Policy};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde_json::Value;

/// A compiled policy and the limits on what is read, built once and called
/// before every agent request.
#[pyclass(frozen, module = "ctxgate._ctxgate", name = "Gate")]
struct Gate {
    inner: Inner,
}

#[pymethods]
impl Gate {
    #[new]
    #[pyo3(signature = (policy=None, *, max_input_bytes=None, max_elements=None, max_depth=None, max_content_bytes=None, max_projections=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        policy: Option<&Bound<'_, PyAny>>,
        max_input_bytes: Option<usize>,
        max_elements: Option<usize>,
        max_depth: Option<usize>,
        max_content_bytes: Option<usize>,
        max_projections: Option<usize>,
    ) -> PyResult<Gate> {
        let source = PolicySource::from_py(py, policy)?;
        let mut limits = Limits::default();
        let set = |field: &mut usize, value: Option<usize>| {
            if let Some(value) = value {
                *field = value;
            }
        };
        set(&mut limits.max_input_bytes, max_input_bytes);
        set(&mut limits.max_elements, max_elements);
        set(&mut limits.max_depth, max_depth);
        set(&mut limits.max_content_bytes, max_content_bytes);
        set(&mut limits.max_projections, max_projections);
        let gate = py
            .detach(|| {
                let gate = source.gate()?;
                // The token vocabulary (~100 ms, once per process) loads
                // now rather than on the first request.
                gate.warm_up();
                Ok(gate)
            })
            .map_err(|e| raise(py, &e))?;
        Ok(Gate {
            inner: gate.with_limits(limits),
        })
    }

    /// Trims an answer; returns `(output, report)`.
    #[pyo3(signature = (answer, action, target, max_tokens, max_bytes, format, timeout))]
    #[allow(clippy::too_many_arguments)]
    fn trim<'py>(
        &self,
        py: Python<'py>,
        answer: &Bound<'py, PyAny>,
        action: String,
        target: Option<String>,
        max_tokens: Option<usize>,
        max_bytes: Option<usize>,
        format: &str,
        timeout: Option<f64>,
    ) -> PyResult<(Bound<'py, PyString>, Bound<'py, Report>)> {
        let request = (|| {
            let mut params = TrimParams::default();
            params.action = Some(action);
            params.target = target;
            params.max_tokens = max_tokens;
            params.max_bytes = max_bytes;
            params.format = Some(wire::format(format)?);
            params.timeout = timeout.map(wire::timeout_seconds).transpose()?;
            params.request()
        })()
        .map_err(|failure| exception(py, &failure, |_| Ok(())))?;
        let input = AnswerInput::from_py(py, answer, self.inner.limits())?;
        let bytes = input.bytes()?;
        let gate = &self.inner;
        let (output, report) = py
            .detach(|| {
                let trimmed = gate.trim_bytes(bytes, &request)?;
                // Its ids copied out of the input (one string each: a
                // third of what serializing it costs), so that it outlives
                // the answer the host may drop.
                Ok::<_, Error>((trimmed.rendered, trimmed.report.into_owned()))
            })
            .map_err(|e| raise(py, &e))?;
        Ok((
            PyString::new(py, &output),
            Bound::new(py, Report { inner: report })?,
        ))
    }

    /// Checks an answer's conformance; returns every finding.
    fn check<'py>(
        &self,
        py: Python<'py>,
        answer: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let input = AnswerInput::from_py(py, answer, self.inner.limits())?;
        let bytes = input.bytes()?;
        let limits = self.inner.limits();
        let report = py
            .detach(|| ctxgate::check_bytes(bytes, limits))
            .map_err(|e| raise(py, &e))?;
        findings_to_py(py, &report.findings)
    }

    /// The hash of the policy set, as reports name it.
    #[getter]
    fn policy_hash(&self) -> &str {
        self.inner.policy().hash()
    }
}

/// A trim's report, as the library built it, until the host reads it.
#[pyclass(frozen, module = "ctxgate._ctxgate", name = "Report")]
struct Report {
    inner: ctxgate::Report<'static>,
}

#[pymethods]
impl Report {
    /// The report as compact JSON: the same serialization as `ctxgate trim
    /// --report`, made without the GIL.
    fn json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let report = &self.inner;
        let json = py
            .detach(|| serde_json::to_string(report))
            .map_err(|e| internal(py, &format!("the report does not serialize: {e}")))?;
        Ok(PyString::new(py, &json))
    }
}

/// Imports an OS accessibility tree as a 0.2.0 answer (a dict).
#[pyfunction]
fn import_tree<'py>(
    py: Python<'py>,
    format: &str,
    text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let format: ctxgate::import::Format = format.parse().map_err(|e| raise(py, &e))?;
    let bytes: &[u8] = if let Ok(text) = text.cast::<PyString>() {
        text.to_str()?.as_bytes()
    } else if let Ok(bytes) = text.cast::<PyBytes>() {
        bytes.as_bytes()
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "the tree to import must be str or bytes, not {}",
            text.get_type().name()?
        )));
    };
    let answer = py
        .detach(|| {
            let answer = ctxgate::import::import(format, bytes)?;
            serde_json::to_value(&answer).map_err(|e| {
                Failed::Binding(format!("the imported answer does not serialize: {e}"))
            })
        })
        .map_err(|e: Failed| e.raise(py))?;
    to_py(py, &answer)
}

#[pymodule]
fn _ctxgate(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Gate>()?;
    module.add_class::<Report>()?;
    module.add_function(wrap_pyfunction!(import_tree, module)?)?;
    // The import formats, from the library's own list: never a copy to keep in step.
    let formats: Vec<&str> = ctxgate::import::Format::ALL
        .iter()
        .map(|f| f.name())
        .collect();
    module.add("IMPORT_FORMATS", PyTuple::new(module.py(), formats)?)?;
    // The exception class of each kind, from the library's wire table.
    let classes: Vec<&str> = ErrorKind::ALL
        .iter()
        .map(|kind| wire::codes(*kind).python)
        .collect();
    module.add("ERROR_CLASSES", PyTuple::new(module.py(), classes)?)?;
    Ok(())
}

/// Where a gate's policy comes from: the embedded default, or layers as
/// `--policy` values name them (`"default"`, a `.rego` file, a folder),
/// loaded by the library's own loader ([`Policy::load`]).
enum PolicySource {
    Default,
    Layers(Vec<PathBuf>),
}

impl PolicySource {
    fn from_py(py: Python<'_>, policy: Option<&Bound<'_, PyAny>>) -> PyResult<PolicySource> {
        let Some(policy) = policy.filter(|p| !p.is_none()) else {
            return Ok(PolicySource::Default);
        };
        if policy.is_instance_of::<PyList>() || policy.is_instance_of::<PyTuple>() {
            let paths: Vec<PathBuf> = policy.extract()?;
            if paths.is_empty() {
                let failure = wire::Failure::usage(
                    "the list of policy paths is empty; give at least one, or none for the default policy",
                );
                return Err(exception(py, &failure, |_| Ok(())));
            }
            return Ok(PolicySource::Layers(paths));
        }
        Ok(PolicySource::Layers(vec![policy.extract()?]))
    }

    fn gate(&self) -> ctxgate::Result<Inner> {
        match self {
            PolicySource::Default => Inner::embedded_default(),
            PolicySource::Layers(layers) => Ok(Inner::new(Policy::load(layers)?)),
        }
    }
}

/// An answer as the bytes the library reads: a `bytes` or `str` in place,
/// a `dict` serialized to compact JSON.
enum AnswerInput<'py> {
    Bytes(Bound<'py, PyBytes>),
    Str(Bound<'py, PyString>),
    Serialized(Vec<u8>),
}

impl<'py> AnswerInput<'py> {
    fn from_py(py: Python<'py>, answer: &Bound<'py, PyAny>, limits: &Limits) -> PyResult<Self> {
        if let Ok(bytes) = answer.cast::<PyBytes>() {
            return Ok(AnswerInput::Bytes(bytes.clone()));
        }
        if let Ok(text) = answer.cast::<PyString>() {
            return Ok(AnswerInput::Str(text.clone()));
        }
        if answer.is_instance_of::<PyDict>() {
            return serialize(py, answer, limits).map(AnswerInput::Serialized);
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "an answer is bytes, str or dict, not {}",
            answer.get_type().name()?
        )))
    }

    fn bytes(&self) -> PyResult<&[u8]> {
        Ok(match self {
            AnswerInput::Bytes(bytes) => bytes.as_bytes(),
            AnswerInput::Str(text) => text.to_str()?.as_bytes(),
            AnswerInput::Serialized(bytes) => bytes,
        })
    }
}

/// The walk of a Python value into JSON: the JSON pointer of the value
/// being written, and the first failure.
struct Walk {
    path: RefCell<Vec<String>>,
    nesting: usize,
    failure: RefCell<Option<wire::Failure>>,
}

impl Walk {
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for key in self.path.borrow().iter() {
            let _ = write!(pointer, "/{}", key.replace('~', "~0").replace('/', "~1"));
        }
        if pointer.is_empty() {
            pointer.push('/');
        }
        pointer
    }

    fn fail<E: serde::ser::Error>(&self, kind: ErrorKind, what: String) -> E {
        let pointer = self.pointer();
        let message = format!("the answer at {pointer}: {what}");
        let mut failure = self.failure.borrow_mut();
        if failure.is_none() {
            *failure = Some(wire::Failure::new(Kind::Lib(kind), message).with("pointer", pointer));
        }
        E::custom("stopped")
    }
}

/// Serializes a `dict` (and what it holds: dicts with str keys, lists,
/// tuples, str, int, float, bool, None) to compact JSON, in the dict's own
/// key order. Nesting deeper than the gate's limit allows is refused here,
/// as the reader would refuse it: a dict holding itself ends there too.
fn serialize(py: Python<'_>, answer: &Bound<'_, PyAny>, limits: &Limits) -> PyResult<Vec<u8>> {
    let walk = Walk {
        path: RefCell::new(Vec::new()),
        nesting: limits.max_json_nesting(),
        failure: RefCell::new(None),
    };
    let mut bytes = Vec::new();
    let value = PyJson {
        walk: &walk,
        value: answer,
        depth: 1,
    };
    match serde::Serialize::serialize(&value, &mut serde_json::Serializer::new(&mut bytes)) {
        Ok(()) => Ok(bytes),
        Err(e) => Err(match walk.failure.into_inner() {
            Some(failure) => exception(py, &failure, |_| Ok(())),
            None => internal(py, &format!("serializing the answer: {e}")),
        }),
    }
}

struct PyJson<'w, 'a, 'py> {
    walk: &'w Walk,
    value: &'a Bound<'py, PyAny>,
    depth: usize,
}

impl<'w, 'a, 'py> PyJson<'w, 'a, 'py> {
    fn child<'b>(&self, value: &'b Bound<'py, PyAny>) -> PyJson<'w, 'b, 'py> {
        PyJson {
            walk: self.walk,
            value,
            depth: self.depth + 1,
        }
    }
}

impl serde::Serialize for PyJson<'_, '_, '_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let walk = self.walk;
        let value = self.value;
        let nested = value.is_instance_of::<PyDict>()
            || value.is_instance_of::<PyList>()
            || value.is_instance_of::<PyTuple>();
        if nested && self.depth > walk.nesting {
            return Err(walk.fail(
                ErrorKind::OverLimit,
                format!(
                    "JSON nesting passes {} levels, what the tree's depth limit allows (`max_depth`)",
                    walk.nesting
                ),
            ));
        }
        if value.is_none() {
            serializer.serialize_unit()
        } else if let Ok(b) = value.cast::<PyBool>() {
            serializer.serialize_bool(b.is_true())
        } else if value.is_instance_of::<PyInt>() {
            if let Ok(n) = value.extract::<i64>() {
                serializer.serialize_i64(n)
            } else if let Ok(n) = value.extract::<u64>() {
                serializer.serialize_u64(n)
            } else {
                Err(walk.fail(
                    ErrorKind::InvalidInput,
                    "an integer outside 64 bits".to_string(),
                ))
            }
        } else if let Ok(f) = value.cast::<PyFloat>() {
            let f = f.value();
            if f.is_finite() {
                serializer.serialize_f64(f)
            } else {
                Err(walk.fail(ErrorKind::InvalidInput, format!("{f} is not a JSON number")))
            }
        } else if let Ok(s) = value.cast::<PyString>() {
            match s.to_str() {
                Ok(s) => serializer.serialize_str(s),
                Err(_) => Err(walk.fail(
                    ErrorKind::InvalidInput,
                    "a str that is not valid Unicode (a lone surrogate)".to_string(),
                )),
            }
        } else if let Ok(dict) = value.cast::<PyDict>() {
            let mut map = serializer.serialize_map(Some(dict.len()))?;
            for (key, item) in dict.iter() {
                let Ok(key) = key.cast::<PyString>() else {
                    let kind = key.get_type().name().map(|n| n.to_string());
                    return Err(walk.fail(
                        ErrorKind::InvalidInput,
                        format!(
                            "a dict key is {}; JSON keys are str",
                            kind.as_deref().unwrap_or("not a str")
                        ),
                    ));
                };
                let Ok(key) = key.to_str() else {
                    return Err(walk.fail(
                        ErrorKind::InvalidInput,
                        "a dict key that is not valid Unicode (a lone surrogate)".to_string(),
                    ));
                };
                map.serialize_key(key)?;
                walk.path.borrow_mut().push(key.to_string());
                map.serialize_value(&self.child(&item))?;
                walk.path.borrow_mut().pop();
            }
            map.end()
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            let len = value.len().ok();
            let mut seq = serializer.serialize_seq(len)?;
            let items = value.try_iter().map_err(|_| S::Error::custom("stopped"))?;
            for (index, item) in items.enumerate() {
                let item = item.map_err(|_| S::Error::custom("stopped"))?;
                walk.path.borrow_mut().push(index.to_string());
                seq.serialize_element(&self.child(&item))?;
                walk.path.borrow_mut().pop();
            }
            seq.end()
        } else {
            let kind = value.get_type().name().map(|n| n.to_string());
            Err(walk.fail(
                ErrorKind::InvalidInput,
                format!(
                    "a {} is not JSON (dict, list, str, int, float, bool or None)",
                    kind.as_deref().unwrap_or("value")
                ),
            ))
        }
    }
}

/// A JSON value (the report, an imported answer) as Python objects; keys in
/// their order.
fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                n.into_pyobject(py)?.into_any()
            } else if let Some(n) = n.as_i64() {
                n.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Findings as dicts with the same keys for every finding (`id` is None
/// where the element has none).
fn findings_to_py<'py>(
    py: Python<'py>,
    findings: &[ctxgate::Finding],
) -> PyResult<Bound<'py, PyList>> {
    let json = serde_json::to_value(findings)
        .map_err(|e| internal(py, &format!("a finding does not serialize: {e}")))?;
    findings_json_to_py(py, &json)
}

/// Findings serialized (`check`'s, or an error object's `findings`) as
/// [`findings_to_py`] writes them.
fn findings_json_to_py<'py>(py: Python<'py>, findings: &Value) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for json in findings.as_array().into_iter().flatten() {
        let dict = PyDict::new(py);
        for key in ["pointer", "id", "requirement", "severity", "message"] {
            dict.set_item(key, to_py(py, json.get(key).unwrap_or(&Value::Null))?)?;
        }
        list.append(dict)?;
    }
    Ok(list)
}

/// What stopped a call while the GIL was released.
enum Failed {
    /// The library's error.
    Lib(Error),
    /// An invariant of the binding that did not hold (a bug): raised as
    /// `InternalError`; nothing is returned.
    Binding(String),
}

impl From<Error> for Failed {
    fn from(err: Error) -> Failed {
        Failed::Lib(err)
    }
}

impl Failed {
    fn raise(self, py: Python<'_>) -> PyErr {
        match self {
            Failed::Lib(err) => raise(py, &err),
            Failed::Binding(message) => internal(py, &message),
        }
    }
}

/// A bug of the binding's own as `InternalError`.
fn internal(py: Python<'_>, message: &str) -> PyErr {
    exception(
        py,
        &wire::Failure::new(Kind::Lib(ErrorKind::Internal), message),
        |_| Ok(()),
    )
}

/// The library's error as the exception of its kind. `timeout` is the
/// deadline in seconds, which the error object holds only in whole
/// milliseconds.
fn raise(py: Python<'_>, err: &Error) -> PyErr {
    exception(py, &wire::Failure::from(err), |e| match err {
        Error::Deadline { limit, .. } => e.setattr("timeout", limit.as_secs_f64()),
        _ => Ok(()),
    })
}

/// An error object as an instance of `ctxgate._errors.<class>`, the class
/// the wire table names for its kind: its message, and each field of its
/// `data` as an attribute (`findings` as `Gate.check` returns them; an I/O
/// error's `file` also as `path`), then what `fill` adds. A failure to
/// build it is raised instead (never a partial result).
fn exception(
    py: Python<'_>,
    failure: &wire::Failure,
    fill: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<()>,
) -> PyErr {
    let class = match failure.kind {
        Kind::Lib(kind) => wire::codes(kind).python,
        _ => "Error",
    };
    let built = (|| {
        let module = py.import("ctxgate._errors")?;
        let class = match module.getattr(class) {
            Ok(class) => class,
            Err(_) => module.getattr("Error")?,
        };
        let instance = class.call1((failure.message.as_str(),))?;
        for (key, value) in &failure.fields {
            match key.as_str() {
                "findings" => instance.setattr(key, findings_json_to_py(py, value)?)?,
                _ => instance.setattr(key, to_py(py, value)?)?,
            }
        }
        if failure.kind == Kind::Lib(ErrorKind::Io) {
            if let Some(file) = failure.fields.get("file") {
                instance.setattr("path", to_py(py, file)?)?;
            }
        }
        fill(&instance)?;
        Ok(PyErr::from_value(instance))
    })();
    match built {
        Ok(err) | Err(err) => err,
    }
}
