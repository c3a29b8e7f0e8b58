import { hasLabel } from './hasLabel';
import { isControlPlane } from './isControlPlane';
import { isInCluster } from './isInCluster';
import { isVirtual } from './isVirtual';

/** Every permission rule on the `server` resource. */
export const serverPermissionRules = {
  isControlPlane,
  isVirtual,
  hasLabel,
  isInCluster,
};

export { hasLabel, isControlPlane, isInCluster, isVirtual };
