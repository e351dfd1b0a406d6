import type { Owner, Permission } from '@switchyard/contracts';

export interface Principal {
  readonly owner: Owner;
  readonly tokenId: string;
  readonly permissions: readonly Permission[];
}
