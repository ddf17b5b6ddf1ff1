//! Arrow columns as f64: which types are numbers, and their exact conversion into a row-major
//! buffer.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::DataType;

/// 2⁵³: the integers up to it in magnitude are exactly representable as f64.
const EXACT_INTEGER_LIMIT: u64 = 1 << 53;

/// Whether a column of type `t` holds numbers that convert exactly to f64 (or, for 64-bit
/// integers, values that are checked to): floats of 32 and 64 bits, integers of 8 to 64 bits,
/// booleans (0 and 1).
pub(crate) fn is_number(t: &DataType) -> bool {
    use DataType::*;
    matches!(
        t,
        Float64
            | Float32
            | Int8
            | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Boolean
    )
}

/// What is wrong with a value, and the 0-based row within the array.
pub(crate) struct ValueProblem {
    pub row: usize,
    pub problem: String,
}

/// Writes column `array` into `out[k * stride + offset]` for every row k, as f64. Errors at the
/// first null, NaN, ±∞, or 64-bit integer beyond 2⁵³ in magnitude (which f64 would round).
pub(crate) fn scatter(
    array: &dyn Array, out: &mut [f64], stride: usize, offset: usize,
) -> Result<(), ValueProblem> {
    if array.null_count() > 0 {
        let row = (0..array.len()).find(|&k| array.is_null(k)).unwrap_or(0);
        return Err(ValueProblem {
            row,
            problem: "missing value (null); expected a number in every row (drop or impute the missing values first)"
                .into(),
        });
    }
    let slots = out[offset..].iter_mut().step_by(stride);
    match array.data_type() {
        DataType::Float64 => {
            write_floats(array.as_primitive::<Float64Type>().values().iter().copied(), slots)
        }
        DataType::Float32 => {
            let v = array.as_primitive::<Float32Type>().values();
            write_floats(v.iter().map(|&x| f64::from(x)), slots)
        }
        DataType::Int8 => write_exact::<Int8Type>(array, slots, f64::from),
        DataType::Int16 => write_exact::<Int16Type>(array, slots, f64::from),
        DataType::Int32 => write_exact::<Int32Type>(array, slots, f64::from),
        DataType::UInt8 => write_exact::<UInt8Type>(array, slots, f64::from),
        DataType::UInt16 => write_exact::<UInt16Type>(array, slots, f64::from),
        DataType::UInt32 => write_exact::<UInt32Type>(array, slots, f64::from),
        DataType::Int64 => write_checked::<Int64Type>(array, slots, |v| {
            (v.unsigned_abs() <= EXACT_INTEGER_LIMIT).then_some(v as f64)
        }),
        DataType::UInt64 => write_checked::<UInt64Type>(array, slots, |v| {
            (v <= EXACT_INTEGER_LIMIT).then_some(v as f64)
        }),
        DataType::Boolean => {
            for (o, b) in slots.zip(array.as_boolean().values().iter()) {
                *o = f64::from(u8::from(b));
            }
            Ok(())
        }
        other => Err(ValueProblem { row: 0, problem: format!("type {other} is not a number") }),
    }
}

/// Floats, checked for NaN and ±∞.
fn write_floats<'a>(
    values: impl IntoIterator<Item = f64>, slots: impl Iterator<Item = &'a mut f64>,
) -> Result<(), ValueProblem> {
    for (row, (o, v)) in slots.zip(values).enumerate() {
        if !v.is_finite() {
            return Err(ValueProblem {
                row,
                problem: format!("value {v} is not finite; expected a finite number"),
            });
        }
        *o = v;
    }
    Ok(())
}

/// Integers that every value of the type converts exactly.
fn write_exact<'a, T: ArrowPrimitiveType>(
    array: &dyn Array, slots: impl Iterator<Item = &'a mut f64>, to_f64: fn(T::Native) -> f64,
) -> Result<(), ValueProblem> {
    for (o, &v) in slots.zip(array.as_primitive::<T>().values().iter()) {
        *o = to_f64(v);
    }
    Ok(())
}

/// 64-bit integers: `to_f64` gives `None` beyond 2⁵³.
fn write_checked<'a, T: ArrowPrimitiveType>(
    array: &dyn Array, slots: impl Iterator<Item = &'a mut f64>,
    to_f64: impl Fn(T::Native) -> Option<f64>,
) -> Result<(), ValueProblem> {
    for (row, (o, &v)) in slots.zip(array.as_primitive::<T>().values().iter()).enumerate() {
        *o = to_f64(v).ok_or_else(|| ValueProblem {
            row,
            problem: format!(
                "integer {v:?} is beyond ±2^53, where float64 cannot hold every integer exactly; expected smaller integers (or store the column as float64)"
            ),
        })?;
    }
    Ok(())
}
