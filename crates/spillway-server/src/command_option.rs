//! How MongoDB reads a command's on/off options (`helloOk: 1`, `showPrivileges: true`, a fail
//! point's `closeConnection`): shared by the handshake, the server's own commands and the fail
//! points.

use bson::Bson;

/// Whether a command option is "on" (`true`, or a non-zero number), as MongoDB reads them.
pub(crate) fn truthy(value: &Bson) -> bool {
    match value {
        Bson::Boolean(flag) => *flag,
        Bson::Int32(number) => *number != 0,
        Bson::Int64(number) => *number != 0,
        Bson::Double(number) => *number != 0.0,
        Bson::Null | Bson::Undefined => false,
        _ => true,
    }
}
