/*
 * Lint rules for input from outside (docs/limits.md): every package's .eslintrc.js adds them
 * to no-restricted-syntax for its source files (tests may do as they like).
 */

/** A pattern built at run time is a person's or a configuration's: RE2 only. */
const patterns = [
  {
    selector:
      "NewExpression[callee.name='RegExp']:not([arguments.0.type='Literal'])",
    message:
      "A pattern built at run time goes through compilePattern (servers-common rules/pattern.ts: RE2, linear time, length cap); a fixed pattern is a regex literal. See docs/limits.md, 'Patterns'.",
  },
  {
    selector:
      "CallExpression[callee.name='RegExp']:not([arguments.0.type='Literal'])",
    message:
      "A pattern built at run time goes through compilePattern (servers-common rules/pattern.ts: RE2, linear time, length cap); a fixed pattern is a regex literal. See docs/limits.md, 'Patterns'.",
  },
];

/**
 * Where answers from outside the cluster are read (servers-node, the operator): a body is
 * read only through servers-node's bounded reader (http/boundedBody.ts), never whole.
 */
const bodies = [
  {
    selector:
      'CallExpression[arguments.length=0][callee.property.name=/^(text|json|arrayBuffer|blob|formData|bytes)$/]',
    message:
      "Read an answer from outside through readBoundedText/readBoundedJson (servers-node http/boundedBody.ts): a byte cap and a deadline. See docs/limits.md, 'Answers from outside'.",
  },
];

module.exports = { patterns, bodies };
