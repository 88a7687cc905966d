// newman (Postman's collection runner) ships no types: the part of its API that
// test/docs/postman.test.ts uses.
declare module 'newman' {
  interface Execution {
    item: { name: string }
    response?: { code: number; text(): string }
  }
  export interface Summary {
    run: { executions: Execution[]; failures: { error?: { message: string } }[] }
  }
  export function run(
    options: {
      collection: unknown
      envVar: { key: string; value: string }[]
      folder: string[]
      reporters: string[]
    },
    done: (error: Error | null, summary: Summary) => void,
  ): void
}
