import type {
  BackstageCredentials,
  BackstageUserPrincipal,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';

/** Actions that act for a person (pre-flight, requests) need a user, as the routes do. */
export function userCredentials(
  credentials: BackstageCredentials,
): BackstageCredentials<BackstageUserPrincipal> {
  const principal = credentials.principal as { type?: string };
  if (principal.type !== 'user') {
    throw new NotAllowedError(
      'this action acts for a person: call it with user credentials',
    );
  }
  return credentials as BackstageCredentials<BackstageUserPrincipal>;
}
