//! Configuration files in MySQL option-file format (my.cnf): reader and writer.
