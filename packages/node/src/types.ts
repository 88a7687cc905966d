import type { paths } from './openapi.ts'

// Types keyed on the OpenAPI document's paths and methods (openapi-fetch style): a route's
// path, query and body parameters and its 2xx body, straight from the generated `paths`.

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'

/** The operation object of `method` on `path`; never when the route has no such method. */
export type Operation<P extends keyof paths, M extends Method> = M extends keyof paths[P]
  ? Exclude<paths[P][M], undefined>
  : never

/** The paths that have a `method` operation. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: [Operation<P, M>] extends [never] ? never : P
}[keyof paths]

type ParametersOf<O> = O extends { parameters: infer X } ? X : never

export type PathParams<O> =
  ParametersOf<O> extends { path: infer X } ? ([X] extends [never] ? undefined : X) : undefined

export type QueryParams<O> =
  ParametersOf<O> extends { query?: infer Q } ? ([Q] extends [never] ? undefined : Q) : undefined

export type RequestBody<O> = O extends {
  requestBody?: { content: { 'application/json': infer B } }
}
  ? B
  : undefined

type SuccessStatus = 200 | 201 | 202 | 204

/** The JSON body of the operation's 2xx answers (a union when several are documented). */
export type ResponseBody<O> = O extends { responses: infer R }
  ? {
      [S in keyof R & SuccessStatus]: R[S] extends { content: { 'application/json': infer B } }
        ? B
        : undefined
    }[keyof R & SuccessStatus]
  : never

/** The body of a GET/POST/… on a path: `Json<'/v1/payments/{id}', 'get'>`. */
export type Json<P extends keyof paths, M extends Method> = ResponseBody<Operation<P, M>>
/** The request body of a route. */
export type Body<P extends keyof paths, M extends Method> = RequestBody<Operation<P, M>>
/** The query of a route. */
export type Query<P extends keyof paths, M extends Method> = QueryParams<Operation<P, M>>

/** A list route's query: `limit` and `cursor` optional (the iterator fills them in). */
export type ListQuery<P extends keyof paths> = Omit<
  NonNullable<Query<P, 'get'>>,
  'limit' | 'cursor'
> & { limit?: number }
