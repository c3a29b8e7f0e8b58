/**
 * The field manager of every write the operator makes: server-side apply and managed
 * fields name the operator by it, whichever controller wrote.
 */
export const OPERATOR_FIELD_MANAGER = 'rackside-operator';
