import type {
  BackstageCredentials,
  BackstageUserPrincipal,
} from '@backstage/backend-plugin-api';

/** A user's credentials: pre-flights and requests that write need a person. */
export type UserCredentials = BackstageCredentials<BackstageUserPrincipal>;
