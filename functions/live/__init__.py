"""The deployed live socket: API Gateway WebSocket routes and bus fan-out (handler), log followers
(follower) and the $connect authorizer (authorizer)."""
