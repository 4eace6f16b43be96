//! Pure statistics: slices in, numbers out.
