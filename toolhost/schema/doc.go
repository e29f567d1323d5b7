// Package schema owns the parameters a typed tool declares and the rules
// for the arguments a call gives them: the JSON-Schema subset a parameter
// may have (Schema, Param, FromJSON), the checking and coercion of one
// command's arguments (Schema.Check), the keys the VCP server injects, the
// names the VCP text protocol can carry, and the per-parameter text of an
// invocation description (Param.Doc, Param.Example).
//
// What a tool is and how a call picks one of its commands belong to
// toolhost (Spec, Command, CheckArgs); this package knows nothing of tools.
package schema
