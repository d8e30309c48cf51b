//! `bdp-calc`: the window calculator.
