// Why a store call was refused: a caller broke the store's rules (an unknown execution, a final
// move asked to change, a time that is not ISO-8601). Nothing was changed when one is thrown.

export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreError';
  }
}
