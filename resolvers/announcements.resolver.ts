import { Resolver } from 'type-graphql';

@Resolver()
export class AnnouncementsResolver {}
