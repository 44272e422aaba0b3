"""Sentence templates of the synthetic articles: several phrasings per relation,
and filler sentences that read like an encyclopedia but state no fact.

Relation templates take ``{s}`` (how the article refers to its subject) and
``{v}`` (the value in prose). ``RELATION_PHRASES[(kind, relation)]`` overrides
``RELATION_PHRASES[relation]`` where a kind needs its own wording. Filler
templates take ``{s}``, ``{other}`` (a link to an unrelated entity, so that a
keyword hit is not an answer) and ``{adj}``. The order of every tuple is part of
the world's definition: append, never reorder.
"""

from __future__ import annotations

__all__ = ["RELATION_PHRASES", "FILLER", "FILLER_ADJECTIVES", "SECTION_PLANS"]

RELATION_PHRASES: dict[str | tuple[str, str], tuple[str, ...]] = {
    "birth_date": ("{s} was born on {v}.", "Records give {v} as the date of {s}'s birth.", "{s}'s date of birth is {v}."),
    "birth_place": ("{s} was born in {v}.", "{s} is a native of {v}.", "The birthplace of {s} was {v}."),
    "death_date": ("{s} died on {v}.", "The death of {s} occurred on {v}.", "{s} passed away on {v}."),
    "death_place": ("{s} died in {v}.", "The place of death of {s} was {v}.", "{s} spent the final years in {v}."),
    "nationality": ("{s} was a citizen of {v}.", "{s} held the nationality of {v}.", "By nationality, {s} belonged to {v}."),
    "occupation": ("{s} worked as {v}.", "{s} is known chiefly as {v}.", "By profession, {s} was {v}."),
    "instrument": ("{s}'s main instrument was {v}.", "{s} performed mainly on {v}.", "{s} became known for playing {v}."),
    "alma_mater": ("{s} studied at {v}.", "{s} was educated at {v}.", "{s} attended {v}."),
    "employer": ("{s} worked for {v}.", "{s} was employed by {v}.", "{s} later joined {v}."),
    "spouse": ("{s} married {v}.", "{s} was married to {v}.", "{s}'s spouse was {v}."),
    "awards": ("{s} received the {v}.", "{s}'s honours include the {v}.", "{s} was awarded the {v}."),
    "country": ("{s} is in {v}.", "{s} is associated with {v}.", "{s} belongs to {v}."),
    ("city", "country"): ("{s} is a city in {v}.", "{s} lies in {v}.", "{s} is one of the cities of {v}."),
    ("film", "country"): ("{s} is a production of {v}.", "{s} was made in {v}.", "{s} is a film from {v}."),
    ("event", "country"): ("{s} took place in {v}.", "The host country of {s} was {v}.", "{s} was held in {v}."),
    ("award", "country"): ("{s} is an award of {v}.", "{s} is presented in {v}.", "{s} is based in {v}."),
    "population": ("The population of {s} is {v}.", "{s} is home to {v} inhabitants.", "At the last census, {s} had {v} residents."),
    "area_km2": ("{s} covers an area of {v} square kilometres.", "The area of {s} is {v} km².", "{s} extends over {v} square kilometres."),
    "elevation_m": ("{s} lies at an elevation of {v} metres.", "{s} stands {v} metres above sea level.", "The elevation of {s} is {v} m."),
    "founded": ("{s} was founded in {v}.", "The founding of {s} took place in {v}.", "{s} dates back to {v}."),
    "mayor": ("The mayor of {s} is {v}.", "{s} is governed by mayor {v}.", "The office of mayor of {s} is held by {v}."),
    "capital": ("The capital of {s} is {v}.", "{s} is governed from its capital, {v}.", "The seat of government of {s} is {v}."),
    "currency": ("The currency of {s} is the {v}.", "{s} uses the {v} as its currency.", "Payments in {s} are made in the {v}."),
    "official_language": ("The official language of {s} is {v}.", "{s} has {v} as its official language.", "In {s}, the official language is {v}."),
    "independence_date": ("{s} became independent on {v}.", "{s} declared its independence on {v}.", "The independence of {s} dates from {v}."),
    "head_of_state": ("The head of state of {s} is {v}.", "{s} has {v} as its head of state.", "The current head of state of {s} is {v}."),
    "founded_by": ("{s} was founded by {v}.", "The founders of {s} were {v}.", "{s} owes its foundation to {v}."),
    "headquarters": ("{s} is headquartered in {v}.", "The headquarters of {s} are in {v}.", "{s} has its head office in {v}."),
    "industry": ("{s} operates in {v}.", "{s} is active in the field of {v}.", "The business of {s} is {v}."),
    "employees": ("{s} employs {v} people.", "{s} has a workforce of {v}.", "The number of employees at {s} is {v}."),
    "ceo": ("The chief executive of {s} is {v}.", "{s} is led by chief executive {v}.", "The post of CEO of {s} is held by {v}."),
    "located_in": ("{s} is located in {v}.", "{s} is based in {v}.", "The seat of {s} is {v}."),
    ("event", "located_in"): ("{s} was held in {v}.", "The venue of {s} was {v}.", "{s} took place in {v}."),
    "students": ("{s} enrols {v} students.", "The student body of {s} numbers {v}.", "{s} has {v} students."),
    "author": ("{s} was written by {v}.", "The author of {s} is {v}.", "{s} is a work by {v}."),
    "publisher": ("{s} was published by {v}.", "The publisher of {s} is {v}.", "{s} appeared under the imprint of {v}."),
    "publication_date": ("{s} was published on {v}.", "{s} first appeared on {v}.", "The first edition of {s} is dated {v}."),
    "genre": ("{s} is usually classified as {v}.", "The genre of {s} is {v}.", "Critics place {s} in the genre of {v}."),
    "pages": ("{s} runs to {v} pages.", "The first edition of {s} has {v} pages.", "{s} is {v} pages long."),
    "language": ("{s} was written in {v}.", "The original language of {s} is {v}.", "{s} is a work in {v}."),
    "director": ("{s} was directed by {v}.", "The director of {s} is {v}.", "{s} is a film by {v}."),
    "starring": ("{s} stars {v}.", "The cast of {s} includes {v}.", "The leading roles in {s} are played by {v}."),
    "production_company": ("{s} was produced by {v}.", "The production company of {s} is {v}.", "{s} was made by {v}."),
    "release_date": ("{s} was released on {v}.", "{s} premiered on {v}.", "The release date of {s} is {v}."),
    "runtime": ("{s} runs for {v} minutes.", "The running time of {s} is {v} minutes.", "{s} lasts {v} minutes."),
    "performer": ("{s} is an album by {v}.", "{s} was recorded by {v}.", "The performer on {s} is {v}."),
    "record_label": ("{s} was released by {v}.", "{s} appeared on the {v} label.", "The record label of {s} is {v}."),
    "tracks": ("{s} contains {v} tracks.", "{s} consists of {v} songs.", "The track listing of {s} has {v} entries."),
    "presenter": ("{s} is presented by {v}.", "{s} is awarded by {v}.", "The presenter of {s} is {v}."),
    "first_awarded": ("{s} was first awarded in {v}.", "{s} has been given since {v}.", "The first {s} was presented in {v}."),
    "awarded_for": ("{s} is given for {v}.", "{s} recognises {v}.", "The purpose of {s} is to honour {v}."),
    "date": ("{s} took place on {v}.", "{s} began on {v}.", "The date of {s} was {v}."),
    "organizer": ("{s} was organised by {v}.", "The organiser of {s} was {v}.", "{s} was staged by {v}."),
    "attendance": ("{s} was attended by {v} people.", "Attendance at {s} reached {v}.", "{s} drew a crowd of {v}."),
}

FILLER_ADJECTIVES = (
    "modest", "ambitious", "uneven", "influential", "restrained", "unusual", "careful",
    "lively", "understated", "controversial", "remarkable", "quiet",
)

# Filler by topic: plausible encyclopedic text that states no fact of the graph.
FILLER: dict[str, tuple[str, ...]] = {
    "history": (
        "The early history of {s} is known mainly from later accounts.",
        "Local historians have long debated the origins of {s}.",
        "Some of the surviving records were damaged, and several details remain uncertain.",
        "Later writers compared {s} with {other}, although the comparison has been disputed.",
        "A period of {adj} growth followed, marked by new trade routes and public works.",
        "Several archives hold letters and documents that describe this period.",
        "The name of {s} appears in a number of older sources with varying spellings.",
        "Scholars have described the period as {adj} but formative.",
    ),
    "culture": (
        "{s} has a {adj} tradition of music, theatre and public festivals.",
        "Visitors often mention the old markets and the river promenades.",
        "A local museum holds collections of paintings, maps and everyday objects.",
        "The cuisine draws on regional produce, with bread, fish and preserved fruit.",
        "Writers from {other} have described {s} in essays and travel accounts.",
        "Several annual events attract visitors from neighbouring regions.",
    ),
    "economy": (
        "The economy of {s} rests on trade, services and small manufacturing.",
        "Commentators have called its economic policy {adj}.",
        "Links with {other} have shaped its trade for several decades.",
        "Agriculture remains important in the surrounding districts.",
        "Tourism has grown steadily, helped by improved transport connections.",
    ),
    "career": (
        "Contemporaries described the work of {s} as {adj}.",
        "{s} often collaborated with younger colleagues and encouraged new approaches.",
        "Critics have compared {s} with {other}, noting shared interests but different methods.",
        "During this period {s} travelled widely and gave many public talks.",
        "{s} kept detailed notebooks, some of which were later published.",
        "The projects of this time were {adj} in scope and drew wide attention.",
        "{s} was known for a disciplined working routine.",
    ),
    "personal": (
        "{s} rarely gave interviews and kept private life out of the public eye.",
        "Friends remembered {s} as generous and {adj} in manner.",
        "{s} was an enthusiastic walker and a keen reader of history.",
        "Correspondence with {other} reveals a long friendship.",
    ),
    "legacy": (
        "The influence of {s} has been the subject of several studies.",
        "Later generations have reassessed {s} in a more {adj} light.",
        "An exhibition about {s} was organised in {other}.",
        "Opinions on the lasting importance of {s} remain divided.",
        "Several streets and a small park have been named in honour of {s}.",
    ),
    "reception": (
        "Critical reception of {s} was {adj}.",
        "Reviewers praised the pacing and the attention to detail.",
        "Some critics found {s} too long, while others admired its ambition.",
        "{s} was compared with {other} in several reviews.",
        "Audiences responded warmly, and word of mouth helped its reputation grow.",
        "In later years {s} came to be regarded as {adj} but important.",
        "A number of retrospective essays have discussed its themes of memory and loss.",
    ),
    "production": (
        "Work on {s} began after a long period of preparation.",
        "The production faced several delays, mostly because of funding.",
        "The team drew inspiration from {other} and from older folk traditions.",
        "The final version of {s} differs in several places from early drafts.",
        "Much of the work was done in a small studio, with a {adj} budget.",
    ),
    "organisation": (
        "{s} is run by a board and a small permanent staff.",
        "The organisation of {s} has been described as {adj}.",
        "Partnerships with {other} were established over the years.",
        "Funding comes from a mix of fees, donations and public grants.",
        "A reform of its structure was discussed but never fully carried out.",
    ),
}

# (heading, relations told in that section, filler topic) per kind; the article
# ends with one extra filler-only section chosen from the last element.
SECTION_PLANS: dict[str, tuple[tuple[str, tuple[str, ...], str], ...]] = {
    "person": (
        ("Early life and education", ("birth_date", "birth_place", "nationality", "alma_mater"), "history"),
        ("Career", ("occupation", "instrument", "employer", "awards"), "career"),
        ("Personal life", ("spouse", "death_date", "death_place"), "personal"),
        ("Legacy", (), "legacy"),
    ),
    "city": (
        ("History", ("founded",), "history"),
        ("Geography", ("country", "area_km2", "elevation_m"), "culture"),
        ("Demographics and government", ("population", "mayor"), "economy"),
        ("Culture", (), "culture"),
    ),
    "country": (
        ("History", ("independence_date",), "history"),
        ("Geography", ("area_km2", "capital"), "culture"),
        ("Politics and economy", ("head_of_state", "currency", "population", "official_language"), "economy"),
        ("Culture", (), "culture"),
    ),
    "company": (
        ("History", ("founded", "founded_by"), "history"),
        ("Operations", ("industry", "headquarters", "employees", "ceo"), "economy"),
        ("Reception", (), "reception"),
    ),
    "university": (
        ("History", ("founded", "founded_by"), "history"),
        ("Campus and organisation", ("located_in", "country", "students"), "organisation"),
        ("Legacy", (), "legacy"),
    ),
    "award": (
        ("History", ("first_awarded", "presenter"), "history"),
        ("Criteria", ("awarded_for", "country"), "organisation"),
        ("Reception", (), "reception"),
    ),
    "book": (
        ("Background", ("author", "language"), "production"),
        ("Publication", ("publisher", "publication_date", "pages", "genre"), "history"),
        ("Reception", (), "reception"),
    ),
    "film": (
        ("Production", ("director", "production_company", "country"), "production"),
        ("Cast", ("starring",), "career"),
        ("Release", ("release_date", "runtime", "genre"), "reception"),
        ("Legacy", (), "legacy"),
    ),
    "album": (
        ("Background and recording", ("performer", "genre"), "production"),
        ("Release", ("record_label", "release_date", "tracks"), "reception"),
        ("Legacy", (), "legacy"),
    ),
    "event": (
        ("Background", ("organizer", "date"), "history"),
        ("Venue and attendance", ("located_in", "country", "attendance"), "organisation"),
        ("Aftermath", (), "legacy"),
    ),
}
