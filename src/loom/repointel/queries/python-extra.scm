; Loom's additions to the Python wheel's tags query: names used as base classes,
; decorators, type annotations and imported names also count as references, so the
; repo-map graph links a file to the classes and helpers it builds on.

(class_definition
  superclasses: (argument_list
    [(identifier) @name
     (attribute attribute: (identifier) @name)])) @reference.class

(decorator
  [(identifier) @name
   (attribute attribute: (identifier) @name)
   (call function: [(identifier) @name (attribute attribute: (identifier) @name)])]) @reference.call

(type (identifier) @name) @reference.type

(import_from_statement
  name: (dotted_name (identifier) @name)) @reference.import

(import_from_statement
  name: (aliased_import name: (dotted_name (identifier) @name))) @reference.import
