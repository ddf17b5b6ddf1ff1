//! Per-step statistics as named numeric columns, derived from the stats type's `Serialize`
//! definition.
//!
//! A kernel's stats are a plain struct (`accept_stat: f64`, `divergent: bool`, `evals:
//! EvalCounts`, ...). The CSV sink and every other consumer that wants flat columns read them
//! through [`StatColumns`]: each leaf field becomes one `f64` column whose name is the field's
//! path joined by `_`, with CmdStan's `__` suffix: `accept_stat__`, `divergent__`, and for a
//! nested `#[serde(rename = "n")] evals: EvalCounts`, `n_terms__`, `n_gradients__`,
//! `n_hessians__`. Booleans are 0/1, integers are converted to `f64`, `None` is NaN, a unit enum
//! variant is its index. Fields marked `#[serde(skip)]` are not columns. Anything else (strings,
//! sequences, maps) cannot be a column and is reported by [`StatColumns::names`] as an error, so
//! a stats type is checked once, before the first draw.
//!
//! Columns come from the definition, never from hand-kept indices: adding a field adds its
//! column, in declaration order.

use serde::Serialize;
use serde::ser::{self, Impossible};

/// Deepest nesting of stats structs the column names support.
const MAX_DEPTH: usize = 4;

/// Why a stats type cannot be written as numeric columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stats field `{field}` cannot be a numeric column: {reason}")]
pub struct ColumnError {
    /// The field's column name (or its path so far).
    pub field: String,
    /// What kind of value it holds.
    pub reason: String,
}

impl ser::Error for ColumnError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Self { field: String::new(), reason: msg.to_string() }
    }
}

/// Reading a stats value as flat numeric columns (see the [module docs](self)).
pub struct StatColumns;

impl StatColumns {
    /// The column names of `value`'s type, in declaration order (`accept_stat__`, ...).
    pub fn names<T: Serialize + ?Sized>(value: &T) -> Result<Vec<String>, ColumnError> {
        let mut names = Vec::new();
        value.serialize(Flatten::new(&mut |path: &[&'static str], _| {
            names.push(column_name(path));
        }))?;
        Ok(names)
    }

    /// Appends `value`'s column values to `out`, in the order of [`StatColumns::names`].
    /// Allocates nothing once `out` has the capacity.
    pub fn values<T: Serialize + ?Sized>(value: &T, out: &mut Vec<f64>) -> Result<(), ColumnError> {
        value.serialize(Flatten::new(&mut |_: &[&'static str], v| out.push(v)))
    }

    /// The value of column `name` in `value`, if there is such a column.
    pub fn get<T: Serialize + ?Sized>(value: &T, name: &str) -> Option<f64> {
        let mut found = None;
        value
            .serialize(Flatten::new(&mut |path: &[&'static str], v| {
                if found.is_none() && column_name(path) == name {
                    found = Some(v);
                }
            }))
            .ok()?;
        found
    }
}

fn column_name(path: &[&'static str]) -> String {
    let mut name = path.join("_");
    if !name.ends_with("__") {
        name.push_str("__");
    }
    name
}

/// The serializer: walks structs, calls `emit(path, value)` for every numeric leaf.
struct Flatten<'e, F: FnMut(&[&'static str], f64)> {
    emit: &'e mut F,
    path: [&'static str; MAX_DEPTH],
    depth: usize,
}

impl<'e, F: FnMut(&[&'static str], f64)> Flatten<'e, F> {
    fn new(emit: &'e mut F) -> Self {
        Self { emit, path: [""; MAX_DEPTH], depth: 0 }
    }

    fn leaf(self, value: f64) -> Result<(), ColumnError> {
        if self.depth == 0 {
            return Err(self.unsupported("a bare number (stats must be a struct)"));
        }
        (self.emit)(&self.path[..self.depth], value);
        Ok(())
    }

    fn unsupported(&self, reason: &str) -> ColumnError {
        ColumnError { field: self.path[..self.depth].join("_"), reason: reason.to_string() }
    }
}

macro_rules! leaf_as_f64 {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Result<(), ColumnError> {
            self.leaf(v as f64)
        })*
    };
}

macro_rules! not_a_column {
    ($($method:ident($($arg:ty),*) -> $ret:ty: $reason:literal),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ret, ColumnError> {
            Err(self.unsupported($reason))
        })*
    };
}

impl<'e, F: FnMut(&[&'static str], f64)> ser::Serializer for Flatten<'e, F> {
    type Ok = ();
    type Error = ColumnError;
    type SerializeSeq = Impossible<(), ColumnError>;
    type SerializeTuple = Impossible<(), ColumnError>;
    type SerializeTupleStruct = Impossible<(), ColumnError>;
    type SerializeTupleVariant = Impossible<(), ColumnError>;
    type SerializeMap = Impossible<(), ColumnError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), ColumnError>;

    leaf_as_f64! {
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_f32: f32, serialize_f64: f64,
    }

    fn serialize_bool(self, v: bool) -> Result<(), ColumnError> {
        self.leaf(if v { 1.0 } else { 0.0 })
    }

    fn serialize_none(self) -> Result<(), ColumnError> {
        self.leaf(f64::NAN)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), ColumnError> {
        value.serialize(self)
    }

    fn serialize_unit_variant(
        self, _name: &'static str, index: u32, _variant: &'static str,
    ) -> Result<(), ColumnError> {
        self.leaf(f64::from(index))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self, _name: &'static str, value: &T,
    ) -> Result<(), ColumnError> {
        value.serialize(self)
    }

    fn serialize_struct(
        self, _name: &'static str, _len: usize,
    ) -> Result<Self::SerializeStruct, ColumnError> {
        Ok(self)
    }

    not_a_column! {
        serialize_char(char) -> (): "a character",
        serialize_str(&str) -> (): "a string",
        serialize_bytes(&[u8]) -> (): "bytes",
        serialize_unit() -> (): "a unit value",
        serialize_unit_struct(&'static str) -> (): "a unit struct",
        serialize_seq(Option<usize>) -> Self::SerializeSeq: "a sequence (mark it #[serde(skip)])",
        serialize_tuple(usize) -> Self::SerializeTuple: "a tuple",
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "a tuple struct",
        serialize_map(Option<usize>) -> Self::SerializeMap: "a map",
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self, _name: &'static str, _index: u32, _variant: &'static str, _value: &T,
    ) -> Result<(), ColumnError> {
        Err(self.unsupported("an enum variant with data"))
    }

    fn serialize_tuple_variant(
        self, _name: &'static str, _index: u32, _variant: &'static str, _len: usize,
    ) -> Result<Self::SerializeTupleVariant, ColumnError> {
        Err(self.unsupported("an enum variant with data"))
    }

    fn serialize_struct_variant(
        self, _name: &'static str, _index: u32, _variant: &'static str, _len: usize,
    ) -> Result<Self::SerializeStructVariant, ColumnError> {
        Err(self.unsupported("an enum variant with data"))
    }
}

impl<'e, F: FnMut(&[&'static str], f64)> ser::SerializeStruct for Flatten<'e, F> {
    type Ok = ();
    type Error = ColumnError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self, key: &'static str, value: &T,
    ) -> Result<(), ColumnError> {
        if self.depth == MAX_DEPTH {
            return Err(self.unsupported("stats nested deeper than 4 structs"));
        }
        let mut path = self.path;
        path[self.depth] = key;
        value.serialize(Flatten { emit: &mut *self.emit, path, depth: self.depth + 1 })
    }

    fn end(self) -> Result<(), ColumnError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EvalCounts;

    #[derive(Serialize, Default)]
    enum Kind {
        #[default]
        First,
        Second,
    }

    #[derive(Serialize, Default)]
    struct Example {
        accept_stat: f64,
        divergent: bool,
        #[serde(rename = "n")]
        evals: EvalCounts,
        sign__: i8,
        width: Option<f64>,
        kind: Kind,
        #[serde(skip)]
        _scratch: Vec<f64>,
    }

    #[test]
    fn names_and_values_follow_the_definition() {
        let s = Example {
            accept_stat: 0.25,
            divergent: true,
            evals: EvalCounts { terms: 10, gradients: 4, hessians: 0 },
            sign__: -1,
            width: None,
            kind: Kind::Second,
            _scratch: vec![1.0],
        };
        let names = StatColumns::names(&s).unwrap();
        assert_eq!(
            names,
            [
                "accept_stat__",
                "divergent__",
                "n_terms__",
                "n_gradients__",
                "n_hessians__",
                "sign__",
                "width__",
                "kind__"
            ]
        );
        let mut values = Vec::new();
        StatColumns::values(&s, &mut values).unwrap();
        assert_eq!(values[..6], [0.25, 1.0, 10.0, 4.0, 0.0, -1.0]);
        assert!(values[6].is_nan());
        assert_eq!(values[7], 1.0);
        assert_eq!(StatColumns::get(&s, "n_gradients__"), Some(4.0));
        assert_eq!(StatColumns::get(&s, "missing__"), None);
    }

    #[test]
    fn a_field_that_is_not_a_number_is_named_in_the_error() {
        #[derive(Serialize)]
        struct Bad {
            ok: f64,
            label: &'static str,
        }
        let e = StatColumns::names(&Bad { ok: 1.0, label: "x" }).unwrap_err();
        assert_eq!(e.field, "label");
        assert!(e.to_string().contains("a string"), "{e}");
    }
}
