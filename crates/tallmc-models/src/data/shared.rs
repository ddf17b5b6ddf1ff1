//! [`SharedF64`]: read-only f64 numbers that live in memory a [`Dataset`](super::Dataset) does
//! not own — a memory-mapped file (the binary format, `.npy` files) or a caller's buffer (a
//! NumPy array, through the Python package) — kept alive by an owner handle.

use std::any::Any;
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::{Error, Result};

/// A read-only `[f64]` in memory owned by `owner` (a memory map, a NumPy array's handle, …):
/// the data set reads it in place, never copying it.
///
/// The safe constructor [`SharedF64::from_map`] checks bounds and alignment. The raw one,
/// [`SharedF64::from_raw_parts`], is how a foreign buffer comes in; its caller promises what
/// Rust cannot check (see there).
pub struct SharedF64 {
    ptr: *const f64,
    len: usize,
    memory_mapped: bool,
    /// Keeps the memory alive (dropped with the last clone of the data set's storage).
    _owner: Arc<dyn Any + Send + Sync>,
}

// SAFETY: the numbers are immutable for the lifetime of `_owner` (the contract of both
// constructors), and `_owner` is itself `Send + Sync`; sharing or sending a read-only pointer to
// memory that nobody writes is sound.
#[allow(unsafe_code)]
unsafe impl Send for SharedF64 {}
#[allow(unsafe_code)]
unsafe impl Sync for SharedF64 {}

impl std::fmt::Debug for SharedF64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedF64")
            .field("len", &self.len)
            .field("memory_mapped", &self.memory_mapped)
            .finish_non_exhaustive()
    }
}

impl SharedF64 {
    /// `len` numbers of `map` starting at byte `offset`. Errors (naming `what`) when the range
    /// is out of the map's bounds or the start is not 8-byte aligned in memory.
    pub fn from_map(map: Arc<Mmap>, offset: usize, len: usize, what: &'static str) -> Result<Self> {
        let end = len.checked_mul(8).and_then(|b| b.checked_add(offset));
        if end.is_none_or(|e| e > map.len()) {
            return Err(Error::invalid(
                what,
                format!("{len} values at byte {offset}"),
                format!("a range within the file's {} bytes", map.len()),
            ));
        }
        let bytes = &map[offset..offset + 8 * len];
        let numbers: &[f64] = bytemuck::try_cast_slice(bytes).map_err(|_| {
            Error::invalid(
                what,
                format!("data at byte offset {offset}"),
                "an offset that is a multiple of 8 bytes (f64 values must be aligned to be read in place)",
            )
        })?;
        let ptr = numbers.as_ptr();
        Ok(Self { ptr, len, memory_mapped: true, _owner: map })
    }

    /// No numbers (the covariates of a model without any, such as the Gaussian mean's).
    pub fn empty() -> Self {
        Self {
            ptr: std::ptr::NonNull::<f64>::dangling().as_ptr(),
            len: 0,
            memory_mapped: false,
            _owner: Arc::new(()),
        }
    }

    /// The numbers of `values`, shared with whoever else holds the `Arc` (no copy).
    pub fn from_arc(values: Arc<Vec<f64>>) -> Self {
        if values.is_empty() {
            return Self::empty();
        }
        let (ptr, len) = (values.as_ptr(), values.len());
        // The Arc is the owner: the vector can be neither freed nor reallocated while this holds
        // a reference to it (`Arc::get_mut` needs the only one), so `ptr` stays valid for `len`.
        Self { ptr, len, memory_mapped: false, _owner: values }
    }

    /// `len` numbers at `ptr`, kept alive by `owner`.
    ///
    /// # Safety
    ///
    /// `ptr` must be non-null, aligned for f64 and valid for reads of `len` values for as long
    /// as `owner` is alive, and nothing may write to those values during that time (a NumPy
    /// array made read-only, a file nobody modifies).
    #[allow(unsafe_code)]
    pub unsafe fn from_raw_parts(
        owner: Arc<dyn Any + Send + Sync>, ptr: *const f64, len: usize, memory_mapped: bool,
    ) -> Self {
        Self { ptr, len, memory_mapped, _owner: owner }
    }

    /// The numbers.
    #[allow(unsafe_code)]
    pub fn as_slice(&self) -> &[f64] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: both constructors guarantee that `ptr` is aligned and valid for `len` reads
        // while `_owner` lives, which is at least as long as `self`; nobody writes the values.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// How many numbers there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the memory is a map of a file (as the owner declared it).
    pub fn is_memory_mapped(&self) -> bool {
        self.memory_mapped
    }
}
