/** Where a group/version lives in the API (a leaf: modules of any weight may spell paths with it). */

/** The path of a group/version: `/api/v1` for the core group, `/apis/<group>/<version>` otherwise. */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}
