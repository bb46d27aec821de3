"""Operations: procedures and incident reports (the CSV/JSON logs live in tabular.py)."""

from datetime import date as D

from .blocks import H1, H2, H3, META, OL, P, TABLE, UL, Doc
from .org import (
    CRANE, ENG, GEARBOX, HSE, OEM, OIL_LAB, OSPREY_PM, BESS_EPC, RELIABILITY, SITE_A, SITE_A_MGR,
    SITE_B, SITE_B_MGR, SITE_C, SOLAR_LEAD, TECH_A, TECH_B,
)

PROC = "Operations/Procedures"
IR = "Operations/Incident-Reports"

DOCS = [
    # -----------------------------------------------------------------------------------------
    Doc(
        f"{PROC}/OP-PRO-112-Tower-Climb-and-Rescue-Procedure.pdf",
        D(2022, 6, 20),
        "OP-PRO-112 Tower Climb and Rescue Procedure",
        HSE,
        subject="Procedure implementing HS-POL-004 Working at Height Policy",
        keywords="working at height; tower climb; rescue; fall arrest; GWO",
        pages=[
            [
                H1("OP-PRO-112 Tower Climb and Rescue Procedure"),
                META([
                    ("Document", "OP-PRO-112, revision 4"),
                    ("Implements", "HS-POL-004 Working at Height Policy (revision 3)"),
                    ("Owner", f"{HSE}, Head of Health, Safety & Environment"),
                    ("Applies to", f"{SITE_A}; {SITE_B}"),
                    ("Effective", "20 June 2022"),
                ]),
                H2("1. Purpose"),
                P("""This procedure sets out how Northwind Renewables staff and contractors climb wind turbine
                towers, work in the nacelle and hub, and carry out a rescue from height. It implements the
                requirements of HS-POL-004 Working at Height Policy. Where this procedure and the policy
                differ, the policy takes precedence and the discrepancy must be reported to the HSE team."""),
                H2("2. Pre-climb checks"),
                OL([
                    """Confirm that every member of the climbing team holds a valid GWO Basic Safety Training
                    Working at Height certificate (valid for 24 months) and is listed as current in the
                    training matrix.""",
                    """A minimum of two competent people must be on site for every climb. Lone climbing is
                    prohibited under any circumstances (see also HS-POL-007 Lone Working Policy).""",
                    """Check the 10-minute mean wind speed at hub height on SCADA. Climbing is not permitted
                    above 18 m/s; work on the nacelle roof or in the hub is not permitted above 12 m/s.
                    Do not climb if lightning has been detected within 10 km in the last 30 minutes.""",
                    """Carry out a pre-use inspection of harness, energy-absorbing lanyards, guided-type fall
                    arrester and helmet. Equipment must carry a thorough examination tag less than six months
                    old. Damaged equipment is quarantined and reported as an incident.""",
                    """Confirm the turbine rescue kit (descender device, rescue rope, stretcher) is present in
                    the nacelle and in date, and brief the rescue plan before climbing.""",
                    "Book the climb in and out with the site control room by radio or phone.",
                ]),
            ],
            [
                H2("3. Climbing the tower"),
                P("""Use the service lift where fitted and serviceable; the ladder is used only where no lift is
                available or the lift is out of service. Climbers attach to the fixed fall-arrest rail before
                leaving the ground and remain attached at all times. Only one person may be on a ladder section
                between rest platforms. Tools and parts above 2 kg are raised with the nacelle crane, never
                carried on the ladder. Tool lanyards are mandatory for all hand tools used above the tower
                base platform, following the dropped-object incident IR-2022-003."""),
                H2("4. Work in the nacelle and hub"),
                P("""Before entering the hub, the rotor must be stopped and mechanically locked with the rotor
                lock, and the pitch system isolated in accordance with OP-PRO-118 Isolation and Lockout. Two
                anchor points are used when working outside the nacelle cover. Hatches are closed when not in
                use. The exclusion zone at the tower base (radius 20 m) remains in force while anyone is
                working aloft."""),
                H2("5. Rescue from height"),
                P("""Every climb team must be able to perform a rescue without outside help. If a person is
                injured or suspended in a harness, the second technician calls the control room and
                emergency services (giving the turbine ID and the what3words location posted at the tower
                door), then carries out the rescue using the nacelle rescue kit. Suspension trauma becomes a
                risk within minutes, so a suspended casualty must be recovered within 10 minutes. Rescue drills
                are held at each wind site at least every six months and recorded in the training matrix."""),
            ],
            [
                H2("6. Records"),
                UL([
                    "Climb log (control room) - retained for 3 years.",
                    "Equipment inspection register - retained for the life of the equipment plus 2 years.",
                    "Rescue drill records - retained for 5 years.",
                ]),
                H2("7. Revision history"),
                TABLE([
                    ["Rev", "Date", "Change", "Approved by"],
                    ["1", "03 Feb 2017", "First issue", "Catriona Bell"],
                    ["2", "11 Mar 2019", "Wind speed limits aligned with OEM manual", "Catriona Bell"],
                    ["3", "14 Sep 2020", "Service lift use added", "Catriona Bell"],
                    ["4", "20 Jun 2022", "Aligned with HS-POL-004 rev 3; tool lanyards mandatory after IR-2022-003", "Catriona Bell"],
                ]),
                P("""Related documents: HS-POL-001 Health and Safety Policy; HS-POL-004 Working at Height Policy;
                HS-POL-007 Lone Working Policy; OP-PRO-118 Isolation and Lockout; Training Matrix."""),
            ],
        ],
    ),
    # -----------------------------------------------------------------------------------------
    Doc(
        f"{PROC}/OP-PRO-203-Gearbox-Oil-Sampling.docx",
        D(2023, 4, 20),
        "OP-PRO-203 Gearbox Oil Sampling and Breather Replacement",
        RELIABILITY,
        subject="Maintenance procedure, gearbox lubrication",
        keywords="gearbox; oil analysis; desiccant breather; maintenance",
        pages=[[
            H1("OP-PRO-203 Gearbox Oil Sampling and Breather Replacement"),
            META([
                ("Document", "OP-PRO-203, revision C"),
                ("Owner", f"{RELIABILITY}, Reliability Engineer"),
                ("Approved", f"{ENG}, Head of Engineering"),
                ("Effective", "20 April 2023"),
                ("Reason for revision", "Corrective actions CA-1 and CA-3 from incident report IR-2023-007"),
            ]),
            H2("1. Scope"),
            P(f"""Applies to all main gearboxes at {SITE_A} ({GEARBOX} BDS-GB2300) and {SITE_B}
            (BDS-GB3000). Both gearbox types use Lubrex Syngear 320, an ISO VG 320 synthetic PAO gear oil."""),
            H2("2. Sampling interval"),
            P("""Gearbox oil is sampled every 6 months, at each semi-annual service. Revision B (2021) had
            extended the interval to 12 months as a cost-saving measure; investigation IR-2023-007 found that
            the extended interval removed the last opportunity to detect water contamination before the
            Carrow Moor CM-T04 gearbox failure, so revision C restores the 6-monthly interval. An additional
            sample is taken within 7 days of any gearbox temperature or CMS alarm."""),
            H2("3. Taking the sample"),
            OL([
                "Run the turbine for at least 30 minutes before sampling so that the oil is at working temperature.",
                "Stop the turbine and isolate in accordance with OP-PRO-118.",
                "Flush the sampling valve with 0.5 litres of oil into a waste container.",
                "Fill a clean 100 ml sample bottle to 80%, label it with the turbine ID, gearbox serial number, date and oil hours.",
                f"Dispatch to {OIL_LAB} within 48 hours using the pre-paid courier pouch.",
            ]),
            H2("4. Action limits"),
            TABLE([
                ["Parameter", "Caution", "Action (stop and investigate)"],
                ["Water content (Karl Fischer)", "> 500 ppm", "> 1,000 ppm"],
                ["Iron (Fe)", "> 50 ppm", "> 100 ppm"],
                ["ISO 4406 cleanliness", "worse than 17/15/12", "worse than 20/18/15"],
                ["Viscosity at 40 °C", "+/- 10% of 320 cSt", "+/- 15% of 320 cSt"],
            ]),
            H2("5. Desiccant breather replacement"),
            P("""The desiccant breather is inspected at every semi-annual service (checklist item 7.4) and
            replaced when more than two-thirds of the silica gel has changed colour, or every 12 months,
            whichever is sooner. Item 7.4 may not be marked N/A. If no replacement breather is available,
            the technician must inform the site manager the same day and the turbine may remain in service
            for a maximum of 14 days until the part is fitted. Minimum stock: 4 breathers per site."""),
            H2("6. Records"),
            P("""Laboratory results are loaded into the maintenance log and, from November 2023, into the
            Project Falcon condition-monitoring platform, which trends them alongside vibration data."""),
        ]],
    ),
    # -----------------------------------------------------------------------------------------
    Doc(
        f"{PROC}/OP-PRO-118-Isolation-and-Lockout.md",
        D(2022, 9, 12),
        "OP-PRO-118 Isolation and Lockout",
        HSE,
        pages=[[
            H1("OP-PRO-118 Isolation and Lockout (LOTO)"),
            META([
                ("Document", "OP-PRO-118, revision 2"),
                ("Implements", "HS-POL-005 Electrical Safety Policy"),
                ("Owner", HSE),
                ("Effective", "12 September 2022"),
            ]),
            H2("Purpose"),
            P("""Describes how mechanical and electrical energy sources are isolated, locked and proven dead
            before work on wind turbines, solar inverters and (from 2024) the battery energy storage system.
            It implements HS-POL-005 Electrical Safety Policy. Work on HV equipment (above 1,000 V AC) is
            additionally controlled by the HV Safety Rules and requires a permit-to-work issued by an
            Authorised Person."""),
            H2("Steps"),
            OL([
                "Identify all energy sources: grid supply, UPS, hydraulic accumulators, pitch batteries, rotor inertia, stored charge in DC links and capacitors.",
                "Stop the equipment using the normal control sequence and inform the control room.",
                "Isolate each source at the designated isolation point and apply a personal padlock and danger tag. Every person working applies their own lock to the multi-lock hasp.",
                "Dissipate stored energy: vent hydraulic accumulators, wait 5 minutes for inverter DC links to discharge (15 minutes for BESS power conversion systems).",
                "Prove dead with an approved voltage indicator, testing it on a known live source before and after use.",
                "Record the isolation on the isolation certificate and keep it at the point of work.",
            ]),
            H2("Removing locks"),
            P("""Locks are removed only by their owner. If a lock owner has left site, the site manager may
            authorise removal after contacting the person and confirming that all personnel are clear. The
            event is recorded as a near miss."""),
            H2("Related"),
            UL([
                "HS-POL-005 Electrical Safety Policy",
                "OP-PRO-112 Tower Climb and Rescue Procedure",
                "IR-2022-011 Near miss: arc flash at inverter HF-INV-03 (the incident that prompted revision 2)",
            ]),
        ]],
    ),
    # -----------------------------------------------------------------------------------------
    # Incident reports 2022
    # -----------------------------------------------------------------------------------------
    Doc(
        f"{IR}/2022/IR-2022-003-Dropped-Object-BR-T07.pdf",
        D(2022, 5, 18),
        "IR-2022-003 Dropped object from nacelle, Brackenridge BR-T07",
        SITE_A_MGR,
        subject="Incident report",
        keywords="dropped object; working at height; Brackenridge; BR-T07",
        pages=[
            [
                H1("Incident Report IR-2022-003: Dropped Object from Nacelle"),
                META([
                    ("Reference", "IR-2022-003"),
                    ("Date of incident", "11 May 2022, 10:20"),
                    ("Location", f"{SITE_A}, turbine BR-T07"),
                    ("Category", "High-potential near miss (no injury)"),
                    ("Reported by", f"{SITE_A_MGR}, Site Manager"),
                    ("Report date", "18 May 2022"),
                ]),
                H2("Summary"),
                P(f"""During a scheduled semi-annual service by {OEM} technicians, a 19 mm combination
                spanner (approximately 0.4 kg) fell from the nacelle of BR-T07 through an open floor hatch,
                struck the yaw deck and then fell to the tower base platform, about 72 metres below. The spanner
                landed 1.5 metres from the tower door. Nobody was inside the 20 m exclusion zone at the time;
                a Northwind technician, {TECH_A}, had left the tower base two minutes earlier."""),
                H2("Immediate actions"),
                UL([
                    "Work stopped on all turbines at Brackenridge for a 30-minute safety stand-down.",
                    "Exclusion zone signage at BR-T07 checked; barrier re-positioned to the full 20 m radius.",
                    "All tools in the nacelle counted and tool lanyards issued to the contractor team.",
                ]),
            ],
            [
                H2("Investigation"),
                P("""The spanner was not attached to a tool lanyard. The floor hatch had been left open to
                allow a cable to be passed down, contrary to OP-PRO-112 revision 3, which required hatches
                to be closed when not in use. The procedure only recommended tool lanyards; it did not make
                them mandatory. The contractor's own method statement did not mention dropped objects."""),
                H2("Root cause"),
                P("""Absence of a mandatory tool-tethering requirement, combined with a hatch left open for
                convenience. Contributing: contractor induction did not cover Northwind's hatch rule."""),
                H2("Corrective actions"),
                TABLE([
                    ["No.", "Action", "Owner", "Due", "Status"],
                    ["1", "Make tool lanyards mandatory above the tower base (OP-PRO-112 rev 4)", HSE, "30 Jun 2022", "Closed 20 Jun 2022"],
                    ["2", "Add dropped-object and hatch rules to contractor induction", SITE_A_MGR, "31 May 2022", "Closed"],
                    ["3", "Raise with Aerion at quarterly contract review", SITE_A_MGR, "15 Jul 2022", "Closed"],
                ]),
                P("""Classified under HS-POL-004 Working at Height Policy as a high-potential event and
                reported to the Board in the June 2022 HSE report."""),
            ],
        ],
    ),
    Doc(
        f"{IR}/2022/IR-2022-011-Near-Miss-Arc-Flash-HF-INV-03.docx",
        D(2022, 10, 4),
        "IR-2022-011 Near miss: arc flash at inverter HF-INV-03",
        SOLAR_LEAD,
        subject="Incident report",
        keywords="electrical safety; near miss; inverter; Hollins Flats; isolation",
        pages=[[
            H1("Incident Report IR-2022-011: Near Miss - Arc Flash at Inverter HF-INV-03"),
            META([
                ("Reference", "IR-2022-011"),
                ("Date of incident", "29 September 2022, 14:05"),
                ("Location", f"{SITE_C}, central inverter HF-INV-03"),
                ("Category", "Near miss (electrical)"),
                ("Reported by", f"{SOLAR_LEAD}, Solar Operations Lead"),
            ]),
            H2("What happened"),
            P("""A technician was replacing a failed cooling fan in inverter HF-INV-03. The AC breaker had been
            opened and locked, but the DC combiner isolators for two of the eight string inputs were still
            closed because the isolation certificate listed only the AC side. When the technician removed the
            fan cover a loose DC cable lug touched the enclosure and produced a short arc with a loud bang.
            The DC fuse operated. The technician was wearing arc-rated PPE and was not injured."""),
            H2("Why it happened"),
            UL([
                "The isolation certificate template for central inverters did not list DC combiner isolators.",
                "The voltage indicator was used only on the AC terminals; the DC bus was not proven dead.",
                "The cable lug had not been re-torqued since commissioning in 2019.",
            ]),
            H2("Actions"),
            TABLE([
                ["Action", "Owner", "Due"],
                ["Revise OP-PRO-118 to require all DC sources to be isolated and proven dead", "Catriona Bell", "15 Sep 2022 (done, rev 2)"],
                ["New isolation certificate template for HF-INV-01 to 06", SOLAR_LEAD, "14 Oct 2022"],
                ["Torque check of all DC terminations, all six inverters", SOLAR_LEAD, "30 Nov 2022"],
            ]),
            P("""This event is governed by HS-POL-005 Electrical Safety Policy. Note: revision 2 of OP-PRO-118
            had already been drafted following an earlier audit finding and was issued early as a result of
            this near miss."""),
        ]],
    ),
    Doc(
        f"{IR}/2022/IR-2022-014-Minor-Injury-Ladder-Climb-CM-T06.txt",
        D(2022, 11, 24),
        "IR-2022-014 Minor injury during ladder climb, CM-T06",
        SITE_B_MGR,
        pages=[[
            H1("Incident Report IR-2022-014"),
            META([
                ("Title", "Minor injury during ladder climb, Carrow Moor CM-T06"),
                ("Date of incident", "22 November 2022, 08:40"),
                ("Location", f"{SITE_B}, turbine CM-T06"),
                ("Category", "First-aid injury"),
                ("Injured person", "Wind technician (Northwind)"),
                ("Reported by", SITE_B_MGR),
            ]),
            H2("Description"),
            P("""The service lift in CM-T06 was out of service awaiting a replacement drive motor, so the
            two-person team climbed the ladder. About 30 m up, the second climber's hand slipped on a rung
            that was wet with condensation. The guided fall arrester locked after a drop of around 0.5 m
            and the technician was able to regain footing. He bruised his left forearm against the ladder
            rail and received first aid on reaching the tower base platform. He returned to normal duties
            the following day."""),
            H2("Findings"),
            P("""Fall-protection equipment worked as designed. Condensation in the tower is common at Carrow
            Moor in winter; the tower dehumidifier had been switched off during the lift repair. The climbers
            were wearing standard rigger gloves rather than the grip gloves specified for wet conditions."""),
            H2("Actions"),
            P("""1) Tower dehumidifiers to remain on at all times (Owen Pritchard, done). 2) Grip gloves added
            to the climb kit list in OP-PRO-112 at next revision (Catriona Bell). 3) Lift repair prioritised:
            motor fitted 30 November 2022. The harness and fall arrester were quarantined and sent for
            thorough examination in line with HS-POL-004 Working at Height Policy."""),
        ]],
    ),
    # -----------------------------------------------------------------------------------------
    # Incident reports 2023
    # -----------------------------------------------------------------------------------------
    Doc(
        f"{IR}/2023/IR-2023-007-Gearbox-Failure-CM-T04.pdf",
        D(2023, 4, 6),
        "IR-2023-007 Gearbox failure, Carrow Moor turbine CM-T04",
        RELIABILITY,
        subject="Incident investigation report - major equipment failure",
        keywords="gearbox; bearing failure; oil contamination; Carrow Moor; Site B; CM-T04; root cause",
        pages=[
            [
                H1("Incident Report IR-2023-007: Gearbox Failure, Turbine CM-T04"),
                META([
                    ("Reference", "IR-2023-007"),
                    ("Date of incident", "14 March 2023, 02:47"),
                    ("Location", f"{SITE_B}, turbine CM-T04"),
                    ("Asset", "Asset ID NWR-B-WTG-04; Aerion AW-3.0, 3.0 MW; commissioned 2016"),
                    ("Component", f"Main gearbox, {GEARBOX} BDS-GB3000, serial BDS-GB3000-1187"),
                    ("Category", "Major equipment failure (no injury)"),
                    ("Investigators", f"{RELIABILITY} (lead), {SITE_B_MGR}, {TECH_B}"),
                    ("Approved by", f"{HSE}; {ENG}"),
                    ("Report date", "6 April 2023"),
                ]),
                H2("1. Summary"),
                P("""At 02:47 on 14 March 2023 the SCADA system raised a "gearbox intermediate-speed shaft
                (ISS) bearing temperature high" alarm on CM-T04 at Carrow Moor (Site B). The bearing temperature
                reached 92 °C against an alarm limit of 85 °C and the turbine shut down automatically two minutes
                later. Borescope inspection the same morning found severe spalling of the ISS bearing inner race
                and secondary pitting on the ISS pinion teeth. The gearbox could not be repaired in the nacelle
                and was exchanged using a main crane on 24 April 2023."""),
                P("""Nobody was injured. The turbine was out of service for 41 days. Direct cost was £359,000
                (exchange gearbox £298,000 and crane hire £61,000); lost generation is estimated at
                1,030 MWh, worth approximately £82,000. Gearboxes are excluded from the Aerion service
                agreement, so the full cost falls to Northwind."""),
                H2("2. Scope of this report"),
                P("""This report covers the failure sequence, the investigation findings and root cause (page 3),
                and the corrective actions (page 4). The insurance claim and the gearbox supplier's teardown
                report are handled separately by Finance and Engineering."""),
            ],
            [
                H2("3. Sequence of events"),
                TABLE([
                    ["Date / time", "Event"],
                    ["16 Mar 2022", "Last gearbox oil sample on CM-T04: water 310 ppm, Fe 38 ppm - within limits."],
                    ["21 Sep 2022", "Semi-annual service by Aerion. Checklist item 7.4 (desiccant breather) marked N/A - part out of stock. Oil sample not taken: not due under the 12-month interval in OP-PRO-203 rev B."],
                    ["Jan-Feb 2023", "SCADA 10-minute data shows ISS bearing temperature drifting 4-6 °C above the fleet average in high wind. No alarm configured for relative drift."],
                    ["14 Mar 2023 02:47", "ISS bearing temperature alarm (92 °C). Turbine auto-stop at 02:49."],
                    ["14 Mar 2023 07:30", "Marcus Reid and a second technician climb (two-person rule, OP-PRO-112). Metallic debris on the magnetic plug."],
                    ["14 Mar 2023 09:15", "Borescope: spalling on ISS bearing inner race, pitting on ISS pinion. Turbine locked out."],
                    ["14 Mar 2023 11:00", "Owen Pritchard notifies Catriona Bell and Tomasz Nowak; incident IR-2023-007 opened."],
                    ["15 Mar 2023", "Post-failure oil sample sent to Lubricheck Laboratories."],
                    ["20 Mar 2023", "Lab results: water 1,450 ppm, Fe 212 ppm, ISO 4406 22/20/17."],
                    ["28 Mar 2023", "Investigation meeting (5-Whys, fishbone) at Carrow Moor."],
                    ["24 Apr 2023", "Exchange gearbox installed by Aerion with Mercer Heavy Lift 600 t crane; turbine returned to service 25 Apr 2023."],
                ]),
                P("""The brown, hazy appearance of the drained oil and the saturated (fully pink) silica gel in
                the breather were photographed and are held on the Site B shared drive."""),
            ],
            [
                H2("4. Investigation findings"),
                P("""Finding 1 - water contamination. The post-failure sample contained 1,450 ppm of water, almost
                three times the caution limit of 500 ppm and above the action limit of 1,000 ppm in OP-PRO-203.
                Free water reduces the oil film thickness in rolling-element bearings and promotes micro-pitting
                and hydrogen embrittlement, which is consistent with the spalling pattern found on the ISS
                bearing."""),
                P("""Finding 2 - saturated desiccant breather. The breather on CM-T04 was last replaced in
                September 2021. At the September 2022 service it was not replaced because no stock was available,
                and checklist item 7.4 was marked N/A without supervisor sign-off. By March 2023 the silica gel was
                fully saturated, so humid air was drawn into the gearbox on every thermal cycle."""),
                P("""Finding 3 - extended oil sampling interval. OP-PRO-203 revision B (2021) had extended gearbox
                oil sampling from 6 to 12 months. Under the previous 6-monthly regime a sample would have been
                taken in September 2022 and would very probably have shown rising water content."""),
                P("""Finding 4 - no vibration monitoring. Carrow Moor turbines have no drivetrain
                condition-monitoring system (CMS). The temperature drift in January and February 2023 was visible
                in SCADA data but nobody was looking for it."""),
                H2("5. Root cause"),
                P("""The root cause of the gearbox failure was water contamination of the gearbox oil, which
                entered through a saturated desiccant breather that was not replaced at the September 2022
                service. The failure was not detected in time because the oil sampling interval had been
                extended to 12 months and Site B had no condition monitoring. Underlying cause: the maintenance
                checklist allowed a safety-relevant item to be marked N/A without escalation, and breather stock
                levels were not managed."""),
            ],
            [
                H2("6. Corrective actions"),
                TABLE([
                    ["No.", "Action", "Owner", "Due", "Status"],
                    ["CA-1", "Restore 6-monthly gearbox oil sampling (OP-PRO-203 rev C)", RELIABILITY, "30 Apr 2023", "Closed 20 Apr 2023"],
                    ["CA-2", "Replace desiccant breathers on all 8 Carrow Moor and 12 Brackenridge turbines", SITE_B_MGR, "30 Apr 2023", "Closed 27 Apr 2023"],
                    ["CA-3", "Checklist item 7.4 may not be marked N/A; minimum stock of 4 breathers per site", RELIABILITY, "30 Apr 2023", "Closed 20 Apr 2023"],
                    ["CA-4", "Bring forward Project Falcon CMS installation at Site B and add online oil particle counters", ENG, "31 Jul 2023", "Open - budget increase to Board 18 Apr 2023"],
                    ["CA-5", "SCADA alarm for ISS bearing temperature 5 °C above fleet average for 24 h", RELIABILITY, "31 May 2023", "Open"],
                    ["CA-6", "Oil samples from all 20 wind turbines within 30 days", RELIABILITY, "14 Apr 2023", "Closed - CM-T02 and BR-T09 at caution level, breathers replaced"],
                ]),
                H2("7. Lessons learned"),
                UL([
                    "Cost savings on inspection intervals must be risk-assessed against component replacement cost.",
                    "Spares shortages for consumables can lead directly to major failures; stock must be monitored.",
                    "Data we already collect (SCADA temperatures) can give weeks of warning if someone trends it.",
                ]),
                H2("8. Sign-off"),
                P(f"""Prepared by {RELIABILITY}, Reliability Engineer. Reviewed by {SITE_B_MGR}, Site Manager,
                Carrow Moor. Approved by {HSE}, Head of HSE, and {ENG}, Head of Engineering, 6 April 2023.
                Distribution: Board (meeting of 18 April 2023), Aerion Wind Services, {GEARBOX}."""),
            ],
        ],
    ),
    Doc(
        f"{IR}/2023/IR-2023-012-Damaged-Fall-Arrest-Lanyard.docx",
        D(2023, 6, 7),
        "IR-2023-012 Damaged fall-arrest lanyard found in service",
        HSE,
        subject="Incident report",
        keywords="working at height; PPE; lanyard; inspection; LOLER",
        pages=[[
            H1("Incident Report IR-2023-012: Damaged Fall-Arrest Lanyard Found in Service"),
            META([
                ("Reference", "IR-2023-012"),
                ("Date found", "5 June 2023"),
                ("Location", f"{SITE_A}, stores"),
                ("Category", "Near miss (working at height equipment)"),
                ("Reported by", f"{TECH_A}, Wind Technician"),
                ("Investigated by", f"{HSE}, Head of HSE"),
            ]),
            H2("Description"),
            P("""During the six-monthly thorough examination of height safety equipment at Brackenridge, the
            inspector found an energy-absorbing twin-leg lanyard with a 40 mm cut through the outer webbing near
            the energy absorber pack. The lanyard was tagged as examined in November 2022 and was in the general
            issue rack. Climb logs show it had been used on at least nine climbs since April 2023. The pre-use
            check required by OP-PRO-112 should have identified the damage."""),
            H2("Findings"),
            UL([
                "The damage is consistent with contact with a sharp edge on the BR-T11 nacelle crane hook guard.",
                "Pre-use checks were being done, but quickly, in poor light in the tower base.",
                "There was no quarantine bin in the stores, so damaged kit could be returned to the rack.",
            ]),
            H2("Actions"),
            TABLE([
                ["Action", "Owner", "Due", "Status"],
                ["Quarantine bins and lighting at the tower-base kit stations, both wind sites", "Grace Whitfield / Owen Pritchard", "30 Jun 2023", "Closed"],
                ["Fit edge protector to BR-T11 nacelle crane hook guard", "Jamie Doherty", "16 Jun 2023", "Closed"],
                ["Pre-use inspection refresher (toolbox talk) for all climbers", "Catriona Bell", "31 Jul 2023", "Closed"],
                ["Add lanyard checks to the HSE intranet monthly reminder", "Catriona Bell", "31 Jul 2023", "Closed"],
            ]),
            P("""Governing policy: HS-POL-004 Working at Height Policy, section 4 (equipment). This was the second
            working-at-height equipment finding in 12 months and was reported to the Board on 10 October 2023."""),
        ]],
    ),
    Doc(
        f"{IR}/2023/IR-2023-019-Lightning-Strike-BR-T03.md",
        D(2023, 8, 21),
        "IR-2023-019 Lightning strike on blade, Brackenridge BR-T03",
        SITE_A_MGR,
        pages=[[
            H1("IR-2023-019 Lightning strike on blade, Brackenridge BR-T03"),
            META([
                ("Reference", "IR-2023-019"),
                ("Date of incident", "16 August 2023, approx. 17:30"),
                ("Location", f"{SITE_A}, turbine BR-T03"),
                ("Category", "Equipment damage (no injury)"),
                ("Reported by", SITE_A_MGR),
            ]),
            H2("Summary"),
            P("""A thunderstorm passed over Brackenridge on the evening of 16 August 2023. The lightning detection
            system recorded a 62 kA strike within 200 m of BR-T03 at 17:31, and the turbine stopped on a
            "blade lightning receptor" fault. Nobody was on site; all climbing had stopped at 15:00 under the
            lightning rule in OP-PRO-112."""),
            H2("Inspection"),
            P("""A drone inspection on 17 August found a burn mark 0.6 m from the tip of blade B and a 25 cm
            longitudinal crack in the trailing edge. The down-conductor resistance test gave 0.8 ohm on blades A
            and C but an open circuit on blade B. The leading-edge protection applied during Project Heron in 2022
            was undamaged."""),
            H2("Repair"),
            UL([
                "Rope-access blade repair by Aerion, 29-31 August 2023, including replacement of the tip receptor and the down-conductor section.",
                "Turbine returned to service 1 September 2023 (16 days lost, estimated 190 MWh).",
                "Repair cost £38,400, claimed under the all-risks insurance policy (excess £25,000).",
            ]),
            H2("Follow-up"),
            P("""Down-conductor continuity tests on all 12 Brackenridge turbines are added to the annual blade
            inspection from 2024. The new Falcon condition-monitoring system was being commissioned on BR-T03
            at the time and recorded no drivetrain damage."""),
        ]],
    ),
    Doc(
        f"{IR}/2023/IR-2023-021-Vehicle-Collision-Access-Track.txt",
        D(2023, 11, 3),
        "IR-2023-021 Vehicle collision on Carrow Moor access track",
        SITE_B_MGR,
        newline="\r\n",
        pages=[[
            H1("Incident Report IR-2023-021"),
            META([
                ("Title", "Vehicle collision on Carrow Moor access track"),
                ("Date of incident", "2 November 2023, 16:15"),
                ("Location", f"{SITE_B}, access track between the gate and CM-T03"),
                ("Category", "Property damage (no injury)"),
                ("Reported by", SITE_B_MGR),
            ]),
            H2("Description"),
            P("""A Northwind pick-up truck travelling downhill towards the site gate met a contractor's van
            coming up the single-track section near CM-T03. Both drivers braked; the pick-up slid on mud and
            loose gravel and struck the van's front wing at low speed (estimated 15 km/h). Nobody was hurt.
            Damage to both vehicles was cosmetic (repair cost about £2,300)."""),
            H2("Causes"),
            P("""Poor track surface after heavy rain; the passing place near CM-T03 was obscured by
            vegetation; the contractor had not radioed the site office before entering, as the site rules
            require. Under the Carrow Moor land lease, maintenance of the access track is shared with the
            landowner, Ardmore Estates (see Legal/Contracts lease summary)."""),
            H2("Actions"),
            P("""1) Grade and re-surface the track and clear the passing places - agreed with Ardmore Estates
            to be done by 15 December 2023, cost split 50/50. 2) Speed limit signs (15 mph) at the gate.
            3) Radio check-in reminder added to the contractor induction. 4) Driving on site added to the
            HS-POL-007 Lone Working Policy review, because the pick-up driver was working alone that day."""),
        ]],
    ),
    # -----------------------------------------------------------------------------------------
    # Incident reports 2024
    # -----------------------------------------------------------------------------------------
    Doc(
        f"{IR}/2024/IR-2024-002-BESS-HVAC-Fault-Osprey-Commissioning.pdf",
        D(2024, 8, 30),
        "IR-2024-002 BESS container HVAC fault during Project Osprey commissioning",
        OSPREY_PM,
        subject="Incident report",
        keywords="battery storage; BESS; HVAC; thermal; Project Osprey; Hollins Flats; commissioning",
        pages=[
            [
                H1("Incident Report IR-2024-002: BESS Container HVAC Fault"),
                META([
                    ("Reference", "IR-2024-002"),
                    ("Date of incident", "22 August 2024, 13:10"),
                    ("Location", f"{SITE_C}, Project Osprey battery container HF-BESS-01-C2"),
                    ("Category", "Equipment fault during commissioning (no injury)"),
                    ("Reported by", f"{OSPREY_PM}, Project Manager, Project Osprey"),
                    ("Contractor", BESS_EPC),
                ]),
                H2("Summary"),
                P("""During the 0.5C charge/discharge cycling tests on battery container C2, the container's
                HVAC unit tripped on a compressor high-pressure fault. The battery management system (BMS)
                reported a maximum cell temperature of 41 °C, above the 35 °C normal operating limit in the Osprey
                design basis, and automatically de-rated the container to 50% power at 13:24. Cycling was
                stopped at 13:30. Temperatures returned to 27 °C within 3 hours with the container idle and
                doors closed. No thermal runaway, off-gassing or fire alarm occurred."""),
                H2("Immediate actions"),
                UL([
                    "Container C2 isolated from the power conversion system and placed in standby.",
                    "Exclusion zone of 10 m set up around C2 until the BMS data had been reviewed.",
                    "Halden Energy Systems notified; HVAC manufacturer's engineer attended on 23 August.",
                ]),
            ],
            [
                H2("Cause"),
                P("""The HVAC manufacturer found that the condenser fan had been wired with reversed rotation
                at the factory, so the condenser was starved of airflow and the compressor tripped at the
                ambient temperature on the day (29 °C). Containers C1, C3 and C4 were checked and were correctly
                wired. The BMS and HVAC protections worked as designed."""),
                H2("Corrective actions"),
                TABLE([
                    ["Action", "Owner", "Due", "Status"],
                    ["Correct fan wiring on C2 and repeat HVAC performance test", BESS_EPC, "30 Aug 2024", "Closed 28 Aug 2024"],
                    ["Add HVAC fan-rotation check to the factory acceptance test checklist", BESS_EPC, "30 Sep 2024", "Open"],
                    ["Repeat 0.5C cycling on C2 with Northwind witness", OSPREY_PM, "6 Sep 2024", "Open"],
                    ["Report impact on energisation date to the Board", OSPREY_PM, "17 Sep 2024", "Open"],
                ]),
                P("""Impact: about two weeks' delay to the commissioning programme. The planned energisation
                date of 30 September 2024 is at risk; see the Project Osprey commissioning plan and the Board
                minutes of 17 September 2024. Delay costs are the contractor's responsibility under clause 9
                of contract NWR-C-2024-003."""),
            ],
        ],
    ),
    Doc(
        f"{IR}/2024/IR-2024-005-Yaw-System-Failure-CM-T02.docx",
        D(2024, 10, 15),
        "IR-2024-005 Yaw drive failure, Carrow Moor CM-T02",
        SITE_B_MGR,
        subject="Incident report",
        keywords="yaw system; Carrow Moor; CM-T02; condition monitoring",
        pages=[[
            H1("Incident Report IR-2024-005: Yaw Drive Failure, CM-T02"),
            META([
                ("Reference", "IR-2024-005"),
                ("Date of incident", "8 October 2024, 11:55"),
                ("Location", f"{SITE_B}, turbine CM-T02"),
                ("Category", "Equipment failure (no injury)"),
                ("Reported by", f"{SITE_B_MGR}, Site Manager"),
            ]),
            H2("Description"),
            P("""CM-T02 stopped on a "yaw misalignment > 30 degrees" fault during a storm with 10-minute mean wind
            speeds of 21 m/s. Inspection found that one of the four yaw drive gear motors had a sheared output
            shaft and the yaw brake pads on the same side were worn to 3 mm (replacement limit 4 mm). The other
            three drives were undamaged. The turbine was restarted with three drives at reduced power and then
            stopped for repair on 10 October."""),
            H2("Findings"),
            UL([
                "The yaw drive was the original 2016 unit; the OEM recommends an overhaul at 8 years.",
                "Yaw brake pad wear was recorded as 5 mm at the April 2024 service, so the wear rate was higher than expected.",
                "The Falcon condition-monitoring system covers the drivetrain only; the yaw system is not monitored.",
            ]),
            H2("Actions"),
            TABLE([
                ["Action", "Owner", "Due"],
                ["Replace yaw drive and all yaw brake pads on CM-T02", "Aerion Wind Services", "18 Oct 2024"],
                ["Inspect yaw drives and brake pads on all Carrow Moor turbines", SITE_B_MGR, "30 Nov 2024"],
                ["Assess adding yaw motor current monitoring to the Falcon CMS (Falcon phase 2)", RELIABILITY, "31 Jan 2025"],
            ]),
            P("""CM-T02 had also been one of the two turbines at caution level for oil water content in the
            April 2023 fleet sampling (IR-2023-007, CA-6); its gearbox oil has been within limits since the
            breather replacement."""),
        ]],
    ),
]
