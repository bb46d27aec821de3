"""The fictional organisation: people, sites, assets, partners. Single source of truth for names.

Northwind Renewables Ltd is an invented small wind/solar owner-operator with ~60 staff, head office
at Kestrel House, Port Ellery. Any resemblance to real organisations or people is accidental.
"""

COMPANY = "Northwind Renewables Ltd"
HQ = "Kestrel House, 14 Harbour Row, Port Ellery"

# people (authors) -------------------------------------------------------------------------------
MD = "Dr Helen Marsh"  # Managing Director
FD = "Rajesh Iyer"  # Finance Director
HSE = "Catriona Bell"  # Head of Health, Safety & Environment
ENG = "Tomasz Nowak"  # Head of Engineering, Falcon sponsor
FALCON_PM = "Aisha Okafor"  # Project Manager, Project Falcon
OSPREY_PM = "Priya Sandhu"  # Electrical Engineer / Project Manager, Project Osprey
RELIABILITY = "Daniel Achterberg"  # Reliability Engineer (condition monitoring, oil analysis)
SITE_A_MGR = "Grace Whitfield"  # Site Manager, Brackenridge (Site A)
SITE_B_MGR = "Owen Pritchard"  # Site Manager, Carrow Moor (Site B)
SOLAR_LEAD = "Elena Petrova"  # Solar Operations Lead, Hollins Flats (Site C)
TECH_B = "Marcus Reid"  # Senior Wind Technician, Site B
TECH_A = "Jamie Doherty"  # Wind Technician, Site A
HR = "Fiona McLeod"  # HR Manager
LEGAL = "Samuel Osei"  # Company Secretary & Legal Counsel
CHAIR = "Geoffrey Lang"  # Non-executive Chair
NED = "Margaret Doyle"  # Non-executive Director

# sites ------------------------------------------------------------------------------------------
SITE_A = "Brackenridge Wind Farm (Site A)"  # 12 x Aerion AW-2.3, 27.6 MW, 2012, BR-T01..BR-T12
SITE_B = "Carrow Moor Wind Farm (Site B)"  # 8 x Aerion AW-3.0, 24 MW, 2016, CM-T01..CM-T08
SITE_C = "Hollins Flats Solar Park (Site C)"  # 18 MWp, 6 central inverters HF-INV-01..06, 2019

# partners ---------------------------------------------------------------------------------------
OEM = "Aerion Wind Services Ltd"  # turbine OEM, scheduled-maintenance contractor
GEARBOX = "Brandt Drive Systems"  # gearbox supplier (BDS-GB2300 / BDS-GB3000)
CMS_VENDOR = "Veridian Sensing Ltd"  # Project Falcon condition-monitoring supplier
BESS_EPC = "Halden Energy Systems Ltd"  # Project Osprey EPC contractor
OIL_LAB = "Lubricheck Laboratories"  # oil analysis laboratory
CRANE = "Mercer Heavy Lift Ltd"  # crane hire
DNO = "Eastern Grid Networks"  # distribution network operator (fictional)
