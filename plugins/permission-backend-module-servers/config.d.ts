export interface Config {}
